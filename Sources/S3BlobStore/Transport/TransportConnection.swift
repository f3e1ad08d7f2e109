internal import BlobSystem

#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive TCP connection to an endpoint: a non-blocking socket waited on with `poll`, and
/// the bytes received but not consumed yet.
///
/// Owned by one exchange at a time (the pool hands it out exclusively), on the thread running
/// that exchange. Unchecked `Sendable` on those terms: it moves between threads only through the
/// pool's lock.
final class TransportConnection: @unchecked Sendable {
    /// The socket.
    let socket: FileDescriptor
    /// Received bytes not consumed yet.
    private var received = ReceiveBuffer(initialCapacity: TransportConnection.initialCapacity, minimumRead: TransportConnection.minimumRead)
    private var isClosed = false
    /// Whether an earlier exchange used this connection (so the gateway may have closed it since).
    var isReused = false
    /// When it was last put back in the pool.
    var idleSince = ContinuousClock.now
    /// Whether any byte of the current exchange's response arrived.
    private(set) var receivedResponseByte = false
    /// Whether any byte of the current exchange's request was handed to the kernel.
    private(set) var sentRequestByte = false

    /// The receive buffer's size; it grows only while a response head does not fit.
    private static let initialCapacity = 64 * 1024
    /// A fill asks the kernel for at least this much room.
    private static let minimumRead = 16 * 1024

    private init(socket: FileDescriptor) {
        self.socket = socket
    }

    deinit {
        close()
    }

    /// Connects to `endpoint` within `timeout`.
    static func open(_ endpoint: TransportEndpoint, timeout: Duration) throws(TCPSocketError) -> TransportConnection {
        TransportConnection(socket: try TCPSocket.connect(host: endpoint.host, port: endpoint.port, timeout: timeout))
    }

    /// Closes the socket (once).
    func close() {
        if isClosed { return }
        isClosed = true
        try? socket.close()
    }

    /// Whether an idle connection was closed by the gateway, or has bytes no request asked for.
    var looksStale: Bool {
        if received.available > 0 { return true }
        var entry = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }

    /// Starts an exchange: forgets the last one's progress.
    func beginExchange() {
        receivedResponseByte = false
        sentRequestByte = false
    }

    // MARK: Sending

    /// Sends every byte, waiting at most `timeout` each time the gateway accepts nothing more.
    func send(_ bytes: UnsafeRawBufferPointer, timeout: Duration) throws(TCPSocketError) {
        var offset = 0
        while offset < bytes.count {
            let sent: Int?
            do { sent = try socket.send(UnsafeRawBufferPointer(rebasing: bytes[offset...])) } catch { throw .system(error) }
            if let sent {
                if sent > 0 { sentRequestByte = true }
                offset += sent
            } else if try !TCPSocket.wait(socket, for: .writable, until: .now + timeout) {
                throw .timedOut(timeout)
            }
        }
    }

    /// Sends `bytes`.
    func send(_ bytes: [UInt8], timeout: Duration) throws(TCPSocketError) {
        let result: Result<Void, TCPSocketError> = bytes.withUnsafeBytes { raw in
            do throws(TCPSocketError) { try send(raw, timeout: timeout) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
    }

    /// Sends `length` bytes of `file` from `offset` with `sendfile(2)`; returns how many were sent
    /// before the file ended (fewer than `length` only if it is shorter than the region).
    func sendFile(_ file: FileDescriptor, offset: Int64, length: Int64, timeout: Duration) throws(TCPSocketError) -> Int64 {
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
            } else if try !TCPSocket.wait(socket, for: .writable, until: .now + timeout) {
                throw .timedOut(timeout)
            }
        }
        return position - offset
    }

    // MARK: Receiving

    /// Unconsumed received bytes.
    var available: Int { received.available }

    /// Receives more bytes into the buffer, waiting at most `timeout`; returns how many (0 at end of
    /// stream).
    @discardableResult
    func fill(timeout: Duration) throws(TCPSocketError) -> Int {
        try received.fill { (room) throws(TCPSocketError) in try receive(into: room, timeout: timeout) }
    }

    /// Receives straight into `destination` (only while nothing is buffered, so bytes stay in order);
    /// returns how many (0 at end of stream).
    func receive(into destination: UnsafeMutableRawBufferPointer, timeout: Duration) throws(TCPSocketError) -> Int {
        socket.requestQuickAcknowledgement()
        let count = try socket.receive(into: destination, timeout: timeout)
        if count > 0 { receivedResponseByte = true }
        return count
    }

    /// Marks `count` buffered bytes consumed.
    func consume(_ count: Int) {
        received.consume(count)
    }

    /// Runs `body` on the unconsumed bytes.
    func withUnconsumedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try received.withUnconsumedBytes(body)
    }

    /// Copies up to `destination.count` unconsumed bytes into `destination`, consuming them; returns how many.
    func take(into destination: UnsafeMutableRawBufferPointer) -> Int {
        received.take(into: destination)
    }
}
