package import BlobSystem
package import HTTP1

/// A request that got no complete response: which endpoint, method and path, and what went wrong.
///
/// The path is the request target without its query: a presigned query carries a signature, which
/// has no place in logs.
package struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package enum Reason: Sendable, Equatable {
        /// The host name does not resolve.
        case unresolvable(String)
        /// Connecting failed (`ECONNREFUSED`, `ENETUNREACH`, …).
        case connect(Errno)
        /// No progress within the timeout during `phase`.
        case timedOut(TransportPhase, Duration)
        /// A socket call failed during `phase` (`ECONNRESET`, `EPIPE`, …).
        case system(Errno, TransportPhase)
        /// The gateway closed the connection before the response's first byte.
        case closedBeforeResponse
        /// The gateway closed the connection in the middle of the response body.
        case closedInBody
        /// The response was not valid HTTP/1.1.
        case malformedResponse(String)
        /// The request body's source failed or ended before its declared length.
        case bodySource(String)
    }

    /// The endpoint asked.
    package let endpoint: TransportEndpoint
    /// The request method.
    package let method: HTTPMethod
    /// The request path (the target without its query).
    package let path: String
    /// What went wrong.
    package let reason: Reason

    /// Creates an error.
    package init(endpoint: TransportEndpoint, method: HTTPMethod, path: String, reason: Reason) {
        self.endpoint = endpoint
        self.method = method
        self.path = path
        self.reason = reason
    }

    /// Whether the request timed out (in any phase).
    package var isTimeout: Bool {
        if case .timedOut = reason { return true }
        return false
    }

    /// E.g. `GET /bucket/key on 127.0.0.1:7480: timed out after 30 s waiting for the first response byte`.
    package var description: String {
        "\(method.token) \(path) on \(endpoint): \(reasonText)"
    }

    private var reasonText: String {
        switch reason {
        case .unresolvable(let why): return "cannot resolve the host: \(why)"
        case .connect(let errno): return "cannot connect: \(errno)"
        case .timedOut(let phase, let timeout): return "timed out after \(timeout.secondsText) \(phase.text)"
        case .system(let errno, let phase): return "\(errno) \(phase.text)"
        case .closedBeforeResponse: return "the connection was closed before any response"
        case .closedInBody: return "the connection was closed in the middle of the response body"
        case .malformedResponse(let why): return "malformed response: \(why)"
        case .bodySource(let why): return "the request body could not be read: \(why)"
        }
    }
}

/// Where in an exchange a transport error happened.
package enum TransportPhase: Sendable, Equatable {
    /// Waiting for a free connection slot for the endpoint.
    case waitingForConnection
    /// Connecting.
    case connecting
    /// Sending the request head or body.
    case sending
    /// Waiting for the first byte of the response (or for `100 Continue`).
    case waitingForResponse
    /// Reading the response head or body.
    case receiving

    var text: String {
        switch self {
        case .waitingForConnection: "waiting for a free connection"
        case .connecting: "connecting"
        case .sending: "sending the request"
        case .waitingForResponse: "waiting for the first response byte"
        case .receiving: "reading the response"
        }
    }
}
