internal import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive connection to the daemon: a non-blocking Unix socket waited on with `poll`,
/// plus the bytes received but not yet consumed.
///
/// Used by one exchange at a time (the pool hands it out exclusively), always from a blocking
/// I/O thread, never from the cooperative pool. Only ``shutdown()`` may be called concurrently.
// Unchecked: the buffer and indices belong to the exchange the pool handed the connection to; `closed` is `Locked`.
final class Connection: @unchecked Sendable {
    /// The socket.
    let descriptor: FileDescriptor
    /// Received bytes not consumed yet.
    private var received = ReceiveBuffer(initialCapacity: Connection.initialCapacity, minimumRead: Connection.minimumRead)
    /// Whether this connection already carried an exchange (so the daemon may have closed it since).
    var isReused = false
    /// When it was last returned to the pool.
    var idleSince = DispatchTime.now()
    /// Whether any byte of the current response has arrived.
    private(set) var receivedResponseByte = false
    private let closed = Locked(false)

    /// The receive buffer's first size; it grows when a response head does not fit.
    private static let initialCapacity = 256 * 1024
    /// A fill asks the kernel for at least this much room.
    private static let minimumRead = 64 * 1024

    private init(descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    deinit {
        close()
    }

    /// Connects to `path`, waiting at most `timeout` if the daemon's backlog is full.
    static func open(path: String, timeout: Duration) throws -> Connection {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path), !bytes.contains(0) else {
            throw BlobClientError.daemonUnreachable(socketPath: path, errno: Errno(rawValue: ENAMETOOLONG))
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BlobClientError.daemonUnreachable(socketPath: path, errno: .current) }
        let descriptor = FileDescriptor(rawValue: fd)
        // A blocking Unix-socket connect waits for backlog room for at most SO_SNDTIMEO.
        var limit = timeval(seconds: timeout)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        var result: Int32 = -1
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            }
        } while result != 0 && errno == EINTR
        if result != 0 {
            let error = Errno.current
            try? descriptor.close()
            if error == .wouldBlock { throw BlobClientError.timeout(operation: "connecting to \(path)") }
            throw BlobClientError.daemonUnreachable(socketPath: path, errno: error)
        }
        var zero = timeval()
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &zero, socklen_t(MemoryLayout<timeval>.size))
        do { try descriptor.setNonBlocking(true) } catch {
            try? descriptor.close()
            throw BlobClientError.daemonUnreachable(socketPath: path, errno: error)
        }
        return Connection(descriptor: descriptor)
    }

    /// Closes the socket (once).
    func close() {
        let first = closed.withLock { wasClosed in
            defer { wasClosed = true }
            return !wasClosed
        }
        if first { try? descriptor.close() }
    }

    /// Wakes any thread blocked on this connection (it then sees end of stream); safe from any thread.
    func shutdown() {
        closed.withLock { isClosed in
            if !isClosed { _ = Glibc.shutdown(descriptor.rawValue, Int32(SHUT_RDWR)) }
        }
    }

    /// Whether an idle connection was closed by the daemon (or has unexpected bytes waiting).
    var looksStale: Bool {
        if received.available > 0 { return true }
        var entry = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, 0)
        return ready != 0
    }

    /// Starts a new exchange: forgets whether a response byte arrived.
    func beginExchange() {
        receivedResponseByte = false
    }

    // MARK: Sending

    /// Sends every byte, waiting at most `timeout` for the daemon to accept more each time.
    func send(_ bytes: UnsafeRawBufferPointer, timeout: Duration?) throws(TransportError) {
        var offset = 0
        while offset < bytes.count {
            let sent: Int?
            do {
                sent = try descriptor.send(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            } catch {
                throw .system(error, operation: "sending the request", beforeResponse: !receivedResponseByte)
            }
            if let sent {
                offset += sent
            } else {
                try wait(for: Int16(POLLOUT), timeout: timeout, operation: "sending the request")
            }
        }
    }

    /// Sends `bytes`.
    func send(_ bytes: [UInt8], timeout: Duration?) throws(TransportError) {
        let result: Result<Void, TransportError> = bytes.withUnsafeBytes { raw in
            do throws(TransportError) { try send(raw, timeout: timeout) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
    }

    // MARK: Receiving

    /// Unconsumed received bytes.
    var available: Int { received.available }

    /// Receives more bytes into the buffer; returns how many (0 at end of stream).
    @discardableResult
    func fill(timeout: Duration?, operation: String) throws(TransportError) -> Int {
        try received.fill { (room) throws(TransportError) in try receive(into: room, timeout: timeout, operation: operation) }
    }

    /// Receives into `destination`; returns how many bytes (0 at end of stream). Called with a
    /// caller's buffer only while nothing is buffered (so that bytes stay in order): large bodies
    /// take that path, one copy fewer.
    func receive(into destination: UnsafeMutableRawBufferPointer, timeout: Duration?, operation: String) throws(TransportError) -> Int {
        while true {
            let result: Int?
            do { result = try descriptor.receive(into: destination) } catch {
                throw .system(error, operation: operation, beforeResponse: !receivedResponseByte)
            }
            if let count = result {
                if count > 0 { receivedResponseByte = true }
                return count
            }
            try wait(for: Int16(POLLIN), timeout: timeout, operation: operation)
        }
    }

    /// Marks `count` buffered bytes consumed.
    func consume(_ count: Int) {
        received.consume(count)
    }

    /// Runs `body` on the unconsumed bytes.
    func withUnconsumedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try received.withUnconsumedBytes(body)
    }

    /// Copies up to `destination.count` unconsumed bytes into `destination` and consumes them; returns how many.
    func take(into destination: UnsafeMutableRawBufferPointer) -> Int {
        received.take(into: destination)
    }

    private func wait(for events: Int16, timeout: Duration?, operation: String) throws(TransportError) {
        let milliseconds: Int32 = timeout.map { Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1
        var entry = pollfd(fd: descriptor.rawValue, events: events, revents: 0)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }  // Readable, writable, or an error/hang-up the next call reports.
            if ready == 0 { throw .timeout(operation: operation) }
            let error = Errno.current
            if error == .interrupted { continue }
            throw .system(error, operation: operation, beforeResponse: !receivedResponseByte)
        }
    }
}

extension timeval {
    /// A `timeval` of `duration`.
    init(seconds duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
