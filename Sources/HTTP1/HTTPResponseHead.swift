/// A response head: status line and fields.
///
/// The server builds one and serializes it with ``serialize(into:)``; the client receives one
/// from ``HTTPResponseParser``.
package struct HTTPResponseHead: Sendable {
    /// The status code.
    package var status: HTTPStatus
    /// The protocol version. Default 1.1.
    package var version: HTTPVersion
    /// A reason phrase to send instead of the standard one; `nil` sends the standard one.
    /// In a parsed response, the phrase as received.
    package var reasonPhrase: String?
    /// The fields, in order.
    package var headers: HTTPHeaders

    /// Creates a response head.
    package init(
        status: HTTPStatus, version: HTTPVersion = .http1_1, reasonPhrase: String? = nil,
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.status = status
        self.version = version
        self.reasonPhrase = reasonPhrase
        self.headers = headers
    }

    /// The phrase that is (or was) on the wire: ``reasonPhrase``, or the status's standard phrase.
    package var effectiveReasonPhrase: String { reasonPhrase ?? status.reasonPhrase }

    /// Appends the status line, the fields and the empty line to `buffer`.
    ///
    /// Clear and reuse one buffer per connection; appending never creates a String per field.
    package func serialize(into buffer: inout [UInt8]) {
        HTTPSerializer.appendStatusLine(status, version: version, reasonPhrase: reasonPhrase, into: &buffer)
        HTTPSerializer.appendHeaders(headers, into: &buffer)
        HTTPSerializer.appendEndOfHead(into: &buffer)
    }
}

extension HTTPResponseHead: Equatable {
    /// Equal when status, version, effective reason phrase and fields match, so a head that
    /// relies on the standard phrase equals the same head parsed back.
    package static func == (lhs: HTTPResponseHead, rhs: HTTPResponseHead) -> Bool {
        lhs.status == rhs.status && lhs.version == rhs.version
            && lhs.effectiveReasonPhrase == rhs.effectiveReasonPhrase && lhs.headers == rhs.headers
    }
}
