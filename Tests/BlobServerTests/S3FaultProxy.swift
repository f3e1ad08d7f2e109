import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on loopback between blobd and the S3 gateway that a test can take down and bring
/// back: down, it resets every open connection and closes each new one at once, as a gateway that
/// stopped (or crashed) would look to its clients; up, it relays bytes both ways.
final class S3FaultProxy: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`: the endpoint to give blobd.
    let endpoint: String
    private let listener: FileDescriptor
    private let upstreamHost: String
    private let upstreamPort: UInt16
    /// Whether relaying, and the sockets of open relays (closed when going down). Owned by the mutex.
    private let state = Locked<(up: Bool, stopped: Bool, open: [Int32])>((true, false, []))

    /// A relay to `upstream` (`http://HOST:PORT`).
    init(upstream: String) throws {
        let url = URL(string: upstream)!
        upstreamHost = url.host ?? "127.0.0.1"
        upstreamPort = UInt16(url.port ?? 80)
        listener = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        endpoint = "http://127.0.0.1:\(try TCPSocket.localAddress(listener).port)"
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Resets every relayed connection and refuses new ones until ``up()``.
    func down() {
        // Under the lock: a relay closes its sockets only after taking them out of `open` under it,
        // so no descriptor here has been closed (and its number reused) yet.
        state.withLock { state in
            state.up = false
            for fd in state.open { Self.reset(fd) }
        }
    }

    /// Relays again.
    func up() { state.withLock { $0.up = true } }

    /// Stops accepting and resets every connection.
    func stop() {
        down()
        state.withLock { $0.stopped = true }
        Glibc.shutdown(listener.rawValue, Int32(SHUT_RDWR))
    }

    private static func reset(_ fd: Int32) {
        // SO_LINGER 0: close sends RST, as a crashed peer's kernel would.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            guard let client = try? TCPSocket.accept(listener) else { return }
            guard state.withLock({ $0.up }), let upstream = try? TCPSocket.connect(host: upstreamHost, port: upstreamPort, timeout: .seconds(5)) else {
                Self.reset(client.rawValue)
                try? client.close()
                continue
            }
            state.withLock { $0.open += [client.rawValue, upstream.rawValue] }
            let finished = Locked(0)
            for (from, to) in [(client, upstream), (upstream, client)] {
                Thread.detachNewThread { [self] in
                    Self.pump(from: from, to: to)
                    Glibc.shutdown(to.rawValue, Int32(SHUT_WR))
                    // The second pump to end closes both sockets.
                    if finished.withLock({ $0 += 1; return $0 }) == 2 {
                        state.withLock { state in
                            state.open.removeAll { $0 == client.rawValue || $0 == upstream.rawValue }
                            try? client.close()
                            try? upstream.close()
                        }
                    }
                }
            }
        }
    }

    /// Copies until the source ends or either side fails (the sockets are non-blocking: wait on them).
    private static func pump(from source: FileDescriptor, to destination: FileDescriptor) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            guard let count = try? source.receive(into: buffer, timeout: nil), count > 0 else { return }
            guard (try? destination.sendAll(UnsafeRawBufferPointer(rebasing: buffer[..<count]), timeout: .seconds(30))) != nil else { return }
        }
    }
}
