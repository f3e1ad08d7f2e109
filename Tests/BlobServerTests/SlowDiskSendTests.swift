@testable import BlobServer
import BlobStore
import BlobSystem
import Foundation
import Testing

/// A large file body is hashed as it is sent (docs/STORAGE.md, "Reading"): that reading may wait for
/// the disk, and must not wait on the event loop. With one loop and a disk that holds a large blob's
/// reads for seconds, other requests on the loop keep being answered, and the large body arrives
/// whole once the disk answers.
@Suite struct SlowDiskSendTests {
    @Test(arguments: [nil, "bytes=2097152-"])
    func aLargeBodyWaitingForTheDiskHoldsUpNoOtherRequest(range: String?) throws {
        _ = BrokenPipes.ignored  // a client that gives up mid-body must not kill the test process
        let folder = TempFolder()
        let root = folder.path + "/root"
        try FileSystem.makeDirectories(root)
        let socketPath = folder.path + "/blobd.sock"
        let listener = try UnixSocket.listen(path: socketPath, permissions: 0o600)
        defer { try? listener.close() }
        let catalog = FileStoreCatalog(root: URL(fileURLWithPath: root), configuration: StoreConfiguration(durability: .relaxed))
        let server = try Server(
            listener: listener, catalog: catalog, maximumBlobSize: 1 << 30, eventLoopCount: 1, heartbeatSeconds: 15, accessLog: nil,
            allowedGroup: nil, log: Log(level: .error))
        defer { server.stop(graceSeconds: 1) }

        let large = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let client = try RawClient(path: socketPath)
        #expect(try client.request("PUT", "/v1/stores/s/blobs/large", body: large).status == 201)
        #expect(try client.request("PUT", "/v1/stores/s/blobs/small", body: Array("small".utf8)).status == 201)

        let disk = SlowDisk(folder: root)
        FileSystemSeam.install(disk)
        defer { FileSystemSeam.uninstall(disk) }
        defer { disk.open() }
        let downloading = try RawClient(path: socketPath)
        try downloading.send("GET /v1/stores/s/blobs/large HTTP/1.1\r\nHost: blobd\r\n" + (range.map { "Range: \($0)\r\n" } ?? "") + "\r\n")
        #expect(disk.waitUntilAReadWaits(seconds: 10), "the large body's content was never read")

        // While its read waits: other requests on the same (only) loop, each answered within a second.
        let started = Date()
        var rounds = 0
        while Date().timeIntervalSince(started) < 2 {
            let requests: [(String, String, [UInt8]?, Int)] = [
                ("GET", "/v1/stores/s/blobs/small", nil, 200),
                ("PUT", "/v1/stores/s/blobs/n\(rounds)", Array("body \(rounds)".utf8), 201),
                ("GET", "/v1/health", nil, 200),
            ]
            for (method, target, body, status) in requests {
                let sent = Date()
                let response = try client.request(method, target, body: body)
                let seconds = Date().timeIntervalSince(sent)
                #expect(response.status == status, "\(method) \(target): \(response.text)")
                #expect(seconds < 1, "\(method) \(target) took \(seconds) s while a body's read waited for the disk")
            }
            rounds += 1
        }
        #expect(disk.isHolding, "the read stopped waiting before the test let it go")
        #expect(rounds > 1)

        disk.open()
        let response = try downloading.readResponse()
        #expect(response.status == (range == nil ? 200 : 206))
        #expect(response.body == (range == nil ? large : Array(large[(2 << 20)...])), "the body arrived damaged")
    }
}

/// A disk that holds every `pread` past the first 64 KiB of any file under `folder` (a large
/// blob's content, never a header or a small blob) until ``open()``. Owned by `condition`'s lock.
private final class SlowDisk: FileSystemHook, @unchecked Sendable {
    private let folder: String
    private let condition = NSCondition()
    /// Descriptors opened under the folder, and the reads waiting now.
    private var descriptors: Set<Int32> = []
    private var waiting = 0
    private var opened = false

    init(folder: String) { self.folder = folder }

    func willPerform(_ call: FileSystemCall) throws(Errno) {
        condition.lock()
        defer { condition.unlock() }
        switch call {
        case .close(let descriptor):
            descriptors.remove(descriptor)
        case .read(let descriptor, let offset, _) where offset > 64 << 10 && descriptors.contains(descriptor):
            waiting += 1
            condition.broadcast()
            while !opened { condition.wait() }
            waiting -= 1
        default:
            break
        }
    }

    func didPerform(_ call: FileSystemCall) {
        guard case .open(let path, _, let descriptor) = call, path.hasPrefix(folder + "/") else { return }
        condition.lock()
        descriptors.insert(descriptor)
        condition.unlock()
    }

    func open() {
        condition.lock()
        opened = true
        condition.broadcast()
        condition.unlock()
    }

    var isHolding: Bool {
        condition.lock()
        defer { condition.unlock() }
        return waiting > 0
    }

    func waitUntilAReadWaits(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while waiting == 0 {
            if !condition.wait(until: deadline) { return waiting > 0 }
        }
        return true
    }
}
