@testable import BlobServer
import BlobSystem
import BlobTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// blobd on S3 sends its clients' puts to the gateway side by side: a put's commit waits for the
/// gateway on a thread of its own, not on the thread that commits its event loop's small puts one
/// after another (``UploadLane``), which would let one PUT per loop reach the gateway at a time.
/// Skipped, saying why, without the gateway's env (see ``S3DaemonTests``).
@Suite struct S3PutConcurrencyTests {
    @Test func smallPutsFromManyConnectionsReachTheGatewayTogether() async throws {
        guard let bucket = S3DaemonTests.bucket, let upstream = ProcessInfo.processInfo.environment["AWS_ENDPOINT_URL"] else {
            return print(S3DaemonTests.skipReason)
        }
        let connections = 4
        // Blocking work on a thread of its own; the expectations are checked here, in the test's task.
        let (first, statuses, mostHeld, contents) = try await onOwnThread {
            // Holds each blob PUT of store `puts` until `connections` of them are held at once (or 8 s
            // pass, well within RawClient's 20 s read timeout), then lets them all through.
            let proxy = try PutGatheringProxy(upstreamURL: upstream, holding: "/puts/", until: connections, atMost: .seconds(8))
            defer { proxy.stop() }
            let daemon = try S3DaemonTests.InProcessDaemon(location: S3DaemonTests.location(bucket), endpoint: proxy.url)
            // The store's first put also writes its marker: done before the proxy holds anything.
            let first = try daemon.client().request("PUT", "/v1/stores/puts/blobs/first", body: Array("first".utf8)).status
            proxy.arm()
            let statuses = Locked<[Int]>([])
            let done = DispatchGroup()
            let socketPath = daemon.socketPath
            for index in 0..<connections {
                done.enter()
                Thread {
                    let status =
                        (try? RawClient(path: socketPath).request("PUT", "/v1/stores/puts/blobs/b\(index)", body: Array("blob \(index)".utf8)).status) ?? -1
                    statuses.withLock { $0.append(status) }
                    done.leave()
                }.start()
            }
            done.wait()
            let contents = try (0..<connections).map { try daemon.client().request("GET", "/v1/stores/puts/blobs/b\($0)").text }
            return (first, statuses.withLock { $0 }, proxy.mostHeld, contents)
        }
        #expect(first == 201)
        #expect(statuses == Array(repeating: 201, count: connections))
        #expect(mostHeld == connections, "PUTs held at the gateway at once: \(mostHeld) of \(connections)")
        #expect(contents == (0..<connections).map { "blob \($0)" })
    }
}

/// A TCP proxy in front of the gateway that, once armed, holds every PUT whose request line
/// contains `marker` until `target` of them are held at once (or `limit` has passed since the
/// first), then forwards them all, and counts the most it held at once. Requests are recognised at
/// the start of a read: the S3 transport sends a request only once the previous answer on its
/// connection is in.
///
/// Threads: one accepts; one per connection pumps both ways. `state` is under its lock.
private final class PutGatheringProxy: @unchecked Sendable {
    let port: UInt16
    private let upstreamHost: String
    private let upstreamPort: UInt16
    private let marker: [UInt8]
    private let target: Int
    private let limit: Duration
    private let listener: FileDescriptor
    private let condition = NSCondition()
    // Under `condition`.
    private var armed = false
    private var held = 0
    private var most = 0
    private var open = false
    private var stopped = false

    init(upstreamURL: String, holding marker: String, until target: Int, atMost limit: Duration) throws {
        guard let components = URLComponents(string: upstreamURL), let host = components.host, let port = components.port else {
            throw HarnessError("PutGatheringProxy: cannot read host and port from \(upstreamURL)")
        }
        upstreamHost = host
        upstreamPort = UInt16(port)
        self.marker = Array(marker.utf8)
        self.target = target
        self.limit = limit
        listener = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        self.port = try TCPSocket.localAddress(listener).port
        let listener = listener
        Thread { [weak self] in
            while let client = try? TCPSocket.accept(listener) {
                guard let self else {
                    try? client.close()
                    break
                }
                Thread { self.pump(client) }.start()
            }
        }.start()
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// The most PUTs held at once.
    var mostHeld: Int { condition.withLock { most } }

    /// Starts holding PUTs.
    func arm() { condition.withLock { armed = true } }

    /// Stops accepting; connections end when their peers close.
    func stop() {
        condition.withLock {
            stopped = true
            open = true
            condition.broadcast()
        }
        _ = Glibc.shutdown(listener.rawValue, Int32(SHUT_RDWR))
    }

    /// Holds the caller while the gathering is on and has not reached its target or limit.
    private func gather() {
        condition.lock()
        defer { condition.unlock() }
        guard armed, !open else { return }
        held += 1
        most = max(most, held)
        if held >= target { open = true }
        let deadline = Date() + TimeInterval(limit.components.seconds)
        while !open, condition.wait(until: deadline) {}
        open = true
        condition.broadcast()
    }

    private func pump(_ client: FileDescriptor) {
        defer { try? client.close() }
        guard let upstream = try? TCPSocket.connect(host: upstreamHost, port: upstreamPort, timeout: .seconds(5)) else { return }
        defer { try? upstream.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        while !condition.withLock({ stopped }) {
            var entries = [pollfd(fd: client.rawValue, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream.rawValue, events: Int16(POLLIN), revents: 0)]
            guard poll(&entries, 2, 50) >= 0 || errno == EINTR else { return }
            if entries[0].revents != 0 {
                let count = Glibc.read(client.rawValue, buffer.baseAddress, buffer.count)
                if count <= 0 { return }
                if isHeldPut(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { gather() }
                if !FaultyGateway.write(upstream, buffer, count) { return }
            }
            if entries[1].revents != 0 {
                let count = Glibc.read(upstream.rawValue, buffer.baseAddress, buffer.count)
                if count <= 0 || !FaultyGateway.write(client, buffer, count) { return }
            }
        }
    }

    /// Whether `bytes` start a PUT whose request line contains the marker.
    private func isHeldPut(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.starts(with: Array("PUT ".utf8)) else { return false }
        let line = bytes.prefix { $0 != UInt8(ascii: "\r") }
        guard line.count >= marker.count else { return false }
        return (0...(line.count - marker.count)).contains { line.dropFirst($0).starts(with: marker) }
    }
}
