package import BlobSystem
import BlobStore

/// A failure talking to `blobd` that has no ``BlobStore/BlobStoreError`` equivalent.
public enum BlobClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Connecting to the daemon's socket failed (no socket file, nobody listening, no permission…).
    case daemonUnreachable(socketPath: String, errno: ErrorNumber)
    /// The daemon sent something this client cannot understand, or the connection broke mid-exchange.
    case protocolError(String)
    /// The daemon did not make progress within the configured time.
    case timeout(operation: String)
    /// An error response whose code has no ``BlobStore/BlobStoreError`` case (e.g. `forbidden`, `io_error`).
    case http(status: Int, code: String, message: String)

    /// A sentence saying what went wrong and what to check.
    public var description: String {
        switch self {
        case .daemonUnreachable(let path, let errno):
            return "cannot connect to blobd at \(path): \(errno); blobd may not be running (start it, or pass its --socket path to BlobClient)"
        case .protocolError(let text):
            return "protocol error talking to blobd: \(text)"
        case .timeout(let operation):
            return "timed out waiting for blobd: \(operation)"
        case .http(let status, let code, let message):
            return "blobd answered \(status) \(code): \(message)"
        }
    }

    /// ``daemonUnreachable(socketPath:errno:)`` from the `Errno` a system call returned, so that the
    /// public case shows no BlobSystem type.
    package static func daemonUnreachable(socketPath: String, errno: Errno) -> BlobClientError {
        .daemonUnreachable(socketPath: socketPath, errno: ErrorNumber(errno))
    }
}

/// A transport failure inside one exchange; converted to ``BlobClientError`` at the API boundary.
enum TransportError: Error {
    /// A system call failed; `beforeResponse` is true if no byte of the response had arrived.
    case system(Errno, operation: String, beforeResponse: Bool)
    /// The daemon closed the connection; `beforeResponse` as above.
    case closed(beforeResponse: Bool)
    /// No progress within the timeout.
    case timeout(operation: String)
    /// Bytes that do not parse.
    case malformed(String)

    /// Whether a request that failed this way may be replayed on a fresh connection.
    var isStaleConnection: Bool {
        switch self {
        case .system(let errno, _, let before):
            return before && (errno.rawValue == EPIPE_ || errno.rawValue == ECONNRESET_)
        case .closed(let before):
            return before
        case .timeout, .malformed:
            return false
        }
    }

    /// The public form.
    var publicError: BlobClientError {
        switch self {
        case .system(let errno, let operation, _): return .protocolError("\(operation) failed: \(errno)")
        case .closed: return .protocolError("blobd closed the connection before the response was complete")
        case .timeout(let operation): return .timeout(operation: operation)
        case .malformed(let text): return .protocolError(text)
        }
    }
}
