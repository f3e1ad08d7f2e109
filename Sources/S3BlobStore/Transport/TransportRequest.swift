package import HTTP1

/// One request for ``HTTPTransport``: method, target, fields and body.
///
/// The caller's fields (signed ones included) go out as given. The transport adds `Host` when
/// absent, sets `Content-Length` from the body, and adds `Expect: 100-continue` when
/// ``expectsContinue`` is set; none of these need to be signed.
package struct TransportRequest: Sendable {
    /// The method.
    package var method: HTTPMethod
    /// The request target: the percent-encoded path and query, e.g. `/bucket/key?uploads`.
    package var target: String
    /// The fields.
    package var headers: HTTPHeaders
    /// The body.
    package var body: TransportBody
    /// Whether sending it twice has the effect of sending it once (RFC 9110 §9.2.2). A request on
    /// a reused connection that fails before any response byte is sent again on a fresh connection
    /// only if it is idempotent, or if none of it was sent. Defaults from the method (GET, HEAD, PUT,
    /// DELETE, OPTIONS). Clear it for a conditional PUT whose replay could answer 412 to its own
    /// first attempt.
    package var isIdempotent: Bool
    /// Send the head with `Expect: 100-continue` and hold the body until the gateway says go on
    /// (or ``TransportConfiguration/continueTimeout`` passes): a refusal (403, 412, …) then costs
    /// no body upload. For large bodies.
    package var expectsContinue: Bool

    /// Creates a request.
    package init(
        method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: TransportBody = .empty,
        isIdempotent: Bool? = nil, expectsContinue: Bool = false
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.isIdempotent = isIdempotent ?? [.get, .head, .put, .delete, .options].contains(method)
        self.expectsContinue = expectsContinue
    }

    /// The target without its query, for errors.
    var path: String {
        guard let question = target.firstIndex(of: "?") else { return target }
        return String(target[..<question])
    }

    /// The head as bytes, with the transport's fields added.
    func serializedHead(endpoint: TransportEndpoint, sendsExpect: Bool) -> [UInt8] {
        var fields = headers
        if !fields.contains(.host) { fields.append(.host, value: endpoint.hostField) }
        fields.remove(.transferEncoding)
        let length = body.length
        if length > 0 || method == .put || method == .post {
            fields.set(.contentLength, value: "\(length)")
        } else {
            fields.remove(.contentLength)
        }
        if sendsExpect { fields.set(.expect, value: "100-continue") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fields.count * 48 + target.utf8.count + 32)
        HTTPSerializer.appendRequest(method: method, target: target, headers: fields, into: &bytes)
        return bytes
    }
}
