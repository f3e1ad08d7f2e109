/// How the body that follows a head is delimited (RFC 9112 §6).
package enum HTTPBodyFraming: Sendable, Hashable {
    /// No body: the next message starts right after the head.
    case none
    /// Exactly this many bytes follow the head.
    case contentLength(Int64)
    /// A chunked body follows: decode it with ``ChunkedDecoder``.
    case chunked
    /// The body runs until the server closes the connection (responses only).
    case untilClose
}
