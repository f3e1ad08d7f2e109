import BlobClient
import Foundation

/// A `blobd` process on a temporary root and a short socket path under /tmp.
final class DaemonFixture: @unchecked Sendable {
    /// `$BLOBD` if set, else `<package>/.build/debug/blobd`; nil (with the reason printed) if it was not built.
    static let binary: String? = {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var candidates = [package.appendingPathComponent(".build/debug/blobd").path]
        if let override = ProcessInfo.processInfo.environment["BLOBD"] { candidates.insert(override, at: 0) }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        print("BlobClient integration tests skipped: no blobd binary at \(candidates.last!) (run `swift build --product blobd`)")
        return nil
    }()

    let directory: String
    let root: String
    let socketPath: String
    private var process: Process?

    init() throws {
        directory = "/tmp/bc-\(UInt32.random(in: 0...UInt32.max))"
        root = directory + "/root"
        socketPath = directory + "/s/d.sock"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/s", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the daemon and waits until its socket answers.
    func start() throws {
        guard let binary = Self.binary else { throw CancellationError() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--root", root, "--socket", socketPath, "--durability", "relaxed", "--log-level", "error"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        for _ in 0..<500 {
            if FileManager.default.fileExists(atPath: socketPath) {
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { raw in
                    let bytes = Array(socketPath.utf8)
                    raw.copyBytes(from: bytes)
                    raw[bytes.count] = 0
                }
                let ok = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
                close(fd)
                if ok == 0 { return }
            }
            usleep(10_000)
        }
        throw BlobClientError.protocolError("blobd did not start at \(socketPath)")
    }

    /// Stops the daemon (SIGTERM) and waits for it.
    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
    }

    /// A client of this daemon.
    func client(_ configuration: BlobClient.Configuration = .init()) -> BlobClient {
        BlobClient(socketPath: socketPath, configuration: configuration)
    }
}
