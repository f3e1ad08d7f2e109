/// A parsed request head: request line, fields, and the framing they imply.
///
/// The head owns a copy of its bytes; every byte accessor returns a slice of that copy, and
/// the String accessors decode on demand. Framing has already been validated: if the parser
/// returned a head, ``framing`` is trustworthy.
package struct HTTPRequestHead: Sendable, Equatable {
    /// The method.
    package let method: HTTPMethod
    /// The protocol version, 1.0 or 1.1.
    package let version: HTTPVersion
    /// The fields, in order. ``HTTPHeaders/first(_:)`` looks up a well-known name cheaply.
    package let headers: HTTPHeaders
    /// How the body is delimited: `Content-Length`, `chunked`, or no body.
    package let framing: HTTPBodyFraming
    /// Whether the connection may carry another request after this one's response.
    ///
    /// HTTP/1.1 persists unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    package let keepAlive: Bool
    /// The client sent `Expect: 100-continue` (HTTP/1.1 only): send `100 Continue` before reading
    /// the body, or a final status instead to refuse it.
    package let expectsContinue: Bool

    /// Positions of the target, its path and its query within ``HTTPHeaders/storage``.
    let targetStart: Int32
    let pathStart: Int32
    let pathEnd: Int32
    let targetEnd: Int32

    // MARK: Target

    /// The request target exactly as received, such as `/blobs/a%20b?x=1`.
    package var targetBytes: ArraySlice<UInt8> { headers.storage[Int(targetStart)..<Int(targetEnd)] }

    /// The request target exactly as received.
    package var target: String { String(decoding: targetBytes, as: UTF8.self) }

    /// The path part of the target, still percent-encoded: everything before the first `?`.
    ///
    /// For an absolute-form target (`http://host/p?q`) this is the path after the authority
    /// (`/p`), empty if there is none. For `*` it is `*`.
    package var pathBytes: ArraySlice<UInt8> { headers.storage[Int(pathStart)..<Int(pathEnd)] }

    /// The path part of the target, still percent-encoded.
    package var path: String { String(decoding: pathBytes, as: UTF8.self) }

    /// The query after the first `?`, still encoded; `nil` if the target has no `?`.
    package var queryBytes: ArraySlice<UInt8>? {
        pathEnd == targetEnd ? nil : headers.storage[Int(pathEnd) + 1..<Int(targetEnd)]
    }

    /// The query after the first `?`, still encoded; `nil` if the target has no `?`.
    package var query: String? { queryBytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The path with percent-escapes decoded, as bytes (a decoded path need not be UTF-8).
    ///
    /// - Throws: ``PercentDecodingError`` for a malformed escape or an encoded NUL.
    package func decodedPath() throws(PercentDecodingError) -> [UInt8] {
        try PercentEncoding.decode(pathBytes)
    }

    /// The query's `name=value` pairs, decoded, in order; empty if there is no query.
    package func queryItems() throws(PercentDecodingError) -> [QueryItem] {
        guard let queryBytes else { return [] }
        return try QueryItem.parse(queryBytes)
    }

    // MARK: Framing shortcuts

    /// The body length when the body is framed by `Content-Length`.
    package var contentLength: Int64? {
        if case .contentLength(let length) = framing { return length }
        return nil
    }

    /// Whether the body uses chunked transfer coding.
    package var isChunked: Bool { framing == .chunked }

    /// Whether a body follows the head (a zero `Content-Length` counts as no body).
    package var hasBody: Bool {
        switch framing {
        case .none, .contentLength(0): false
        default: true
        }
    }

    // MARK: Fields the daemon reads

    /// `Host`, if present.
    package var host: String? { headers.first(.host) }
    /// `Content-Type`, if present.
    package var contentType: String? { headers.first(.contentType) }
    /// The first `If-Match`, if present. Use `headers.values(.ifMatch)` when several fields matter.
    package var ifMatch: String? { headers.first(.ifMatch) }
    /// The first `If-None-Match`, if present. Use `headers.values(.ifNoneMatch)` when several fields matter.
    package var ifNoneMatch: String? { headers.first(.ifNoneMatch) }
    /// `Range`, if present.
    package var range: String? { headers.first(.range) }
    /// `Last-Event-ID` (server-sent events resumption), if present.
    package var lastEventID: String? { headers.first(.lastEventID) }
}
