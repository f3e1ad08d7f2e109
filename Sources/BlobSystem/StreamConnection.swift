#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive stream connection of an HTTP client that blocks its own thread: a non-blocking
/// socket waited on with `poll`, and the bytes received but not consumed yet. The daemon's client
/// (over a Unix socket) and the S3 transport (over TCP) both hold their connections in one.
///
/// Owned by one exchange at a time (a pool hands it out exclusively), on the thread running that
/// exchange; it moves between threads only through the pool's lock. Only ``close()`` and
/// ``shutdown()`` may be called from another thread. Hence `@unchecked Sendable`.
package final class StreamConnection: @unchecked Sendable {
    /// The socket.
    package let socket: FileDescriptor
    /// Received bytes not consumed yet.
    private var received: ReceiveBuffer
    private let closed = Locked(false)
    /// Whether to ask for `TCP_QUICKACK` before each receive (``FileDescriptor/requestQuickAcknowledgement()``).
    private let acknowledgesAtOnce: Bool
    /// Whether an earlier exchange used this connection (so the peer may have closed it since).
    package var isReused = false
    /// When it was last put back in its pool.
    package var idleSince = ContinuousClock.now
    /// Whether any byte of the current exchange's response arrived.
    package private(set) var receivedResponseByte = false
    /// Whether any byte of the current exchange's request was handed to the kernel.
    package private(set) var sentRequestByte = false

    /// A connection on the connected, non-blocking `socket`. The receive buffer starts at
    /// `initialCapacity` bytes and grows only while a response head does not fit; a fill asks the
    /// kernel for at least `minimumRead` bytes of room. `acknowledgeAtOnce` for TCP.
    package init(socket: FileDescriptor, initialCapacity: Int, minimumRead: Int, acknowledgeAtOnce: Bool) {
        self.socket = socket
        received = ReceiveBuffer(initialCapacity: initialCapacity, minimumRead: minimumRead)
        acknowledgesAtOnce = acknowledgeAtOnce
    }

    deinit {
        close()
    }

    /// Closes the socket (once).
    package func close() {
        let first = closed.withLock { wasClosed in
            defer { wasClosed = true }
            return !wasClosed
        }
        if first { try? socket.close() }
    }

    /// Wakes any thread blocked on this connection (it then sees end of stream); safe from any thread.
    package func shutdown() {
        closed.withLock { isClosed in
            if !isClosed { _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR)) }
        }
    }

    /// Whether an idle connection was closed by the peer, or has bytes no request asked for.
    package var looksStale: Bool {
        if received.available > 0 { return true }
        var entry = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }

    /// Starts an exchange: forgets the last one's progress.
    package func beginExchange() {
        receivedResponseByte = false
        sentRequestByte = false
    }

    // MARK: Sending

    /// Sends every byte, waiting at most `timeout` (`nil`: forever) each time the peer accepts
    /// nothing more.
    package func send(_ bytes: UnsafeRawBufferPointer, timeout: Duration?) throws(TCPSocketError) {
        var offset = 0
        while offset < bytes.count {
            let sent: Int?
            do { sent = try socket.send(UnsafeRawBufferPointer(rebasing: bytes[offset...])) } catch { throw .system(error) }
            if let sent {
                if sent > 0 { sentRequestByte = true }
                offset += sent
            } else {
                try waitUntil(.writable, timeout: timeout)
            }
        }
    }

    /// Sends `bytes`.
    package func send(_ bytes: [UInt8], timeout: Duration?) throws(TCPSocketError) {
        let result: Result<Void, TCPSocketError> = bytes.withUnsafeBytes { raw in
            do throws(TCPSocketError) { try send(raw, timeout: timeout) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
    }

    /// Sends `length` bytes of `file` from `offset` with `sendfile(2)`; returns how many were sent
    /// before the file ended (fewer than `length` only if it is shorter than the region).
    package func sendFile(_ file: FileDescriptor, offset: Int64, length: Int64, timeout: Duration?) throws(TCPSocketError) -> Int64 {
        var position = offset
        let end = offset + length
        while position < end {
            let sent: Int?
            do { sent = try socket.sendFile(from: file, offset: &position, count: Int(min(end - position, 1 << 30))) } catch {
                throw .system(error)
            }
            if let sent {
                if sent == 0 { break }  // The file ended early.
                sentRequestByte = true
            } else {
                try waitUntil(.writable, timeout: timeout)
            }
        }
        return position - offset
    }

    // MARK: Receiving

    /// Unconsumed received bytes.
    package var available: Int { received.available }

    /// Receives more bytes into the buffer, waiting at most `timeout` (`nil`: forever); returns how
    /// many (0 at end of stream).
    @discardableResult
    package func fill(timeout: Duration?) throws(TCPSocketError) -> Int {
        try received.fill { (room) throws(TCPSocketError) in try receive(into: room, timeout: timeout) }
    }

    /// Receives straight into `destination` (only while nothing is buffered, so that bytes stay in
    /// order: large bodies take that path, one copy fewer); returns how many (0 at end of stream).
    package func receive(into destination: UnsafeMutableRawBufferPointer, timeout: Duration?) throws(TCPSocketError) -> Int {
        if acknowledgesAtOnce { socket.requestQuickAcknowledgement() }
        let count = try socket.receive(into: destination, timeout: timeout)
        if count > 0 { receivedResponseByte = true }
        return count
    }

    /// Marks `count` buffered bytes consumed.
    package func consume(_ count: Int) {
        received.consume(count)
    }

    /// Runs `body` on the unconsumed bytes.
    package func withUnconsumedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try received.withUnconsumedBytes(body)
    }

    /// Copies up to `destination.count` unconsumed bytes into `destination`, consuming them; returns how many.
    package func take(into destination: UnsafeMutableRawBufferPointer) -> Int {
        received.take(into: destination)
    }

    private func waitUntil(_ readiness: TCPSocket.Readiness, timeout: Duration?) throws(TCPSocketError) {
        if try !TCPSocket.wait(socket, for: readiness, until: timeout.map { ContinuousClock.now + $0 }) { throw .timedOut(timeout ?? .zero) }
    }
}
