internal import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive connection to the daemon over its Unix socket (``StreamConnection``): the pool
/// hands it to one exchange at a time, always on a blocking I/O thread, never on the cooperative
/// pool. Its calls below report failures as ``TransportError``s naming what was being done.
typealias Connection = StreamConnection

extension StreamConnection {
    /// The receive buffer's first size; it grows when a response head does not fit.
    private static let clientInitialCapacity = 256 * 1024
    /// A fill asks the kernel for at least this much room.
    private static let clientMinimumRead = 64 * 1024

    /// Connects to `path`, waiting at most `timeout` if the daemon's backlog is full.
    static func open(path: String, timeout: Duration) throws -> StreamConnection {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path), !bytes.contains(0) else {
            throw BlobClientError.daemonUnreachable(socketPath: path, errno: Errno(rawValue: ENAMETOOLONG))
        }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
        return StreamConnection(socket: descriptor, initialCapacity: clientInitialCapacity, minimumRead: clientMinimumRead, acknowledgeAtOnce: false)
    }

    /// Sends every byte of a request, waiting at most `timeout` for the daemon to accept more each time.
    func sendRequest(_ bytes: UnsafeRawBufferPointer, timeout: Duration?) throws(TransportError) {
        do { try send(bytes, timeout: timeout) } catch { throw transportError(error, operation: "sending the request") }
    }

    /// Sends every byte of `bytes` (a request's head or body).
    func sendRequest(_ bytes: [UInt8], timeout: Duration?) throws(TransportError) {
        do { try send(bytes, timeout: timeout) } catch { throw transportError(error, operation: "sending the request") }
    }

    /// Receives more bytes into the buffer; returns how many (0 at end of stream).
    @discardableResult
    func fill(timeout: Duration?, operation: String) throws(TransportError) -> Int {
        do { return try fill(timeout: timeout) } catch { throw transportError(error, operation: operation) }
    }

    /// Receives into `destination` while nothing is buffered; returns how many bytes (0 at end of stream).
    func receive(into destination: UnsafeMutableRawBufferPointer, timeout: Duration?, operation: String) throws(TransportError) -> Int {
        do { return try receive(into: destination, timeout: timeout) } catch { throw transportError(error, operation: operation) }
    }

    private func transportError(_ error: TCPSocketError, operation: String) -> TransportError {
        switch error {
        case .timedOut: .timeout(operation: operation)
        case .system(let errno): .system(errno, operation: operation, beforeResponse: !receivedResponseByte)
        case .unresolvable(let host, let reason): .malformed("cannot resolve \(host): \(reason)")
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
