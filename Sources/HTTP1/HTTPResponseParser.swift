/// An incremental parser for response heads, for the client side of a connection.
///
/// Used like ``HTTPRequestParser``: feed the buffered bytes from the first unconsumed one, and call
/// again with more bytes after `.needMore`. Because a response's framing depends on the request
/// (a response to HEAD never has a body), pass the method of the request being answered.
///
/// Interim responses (`100 Continue` and other 1xx except 101) come back with
/// ``Response/isInterim`` set; skip them and parse again for the final response.
package struct HTTPResponseParser: Sendable {
    /// A parsed response head with the framing of the body that follows it.
    package struct Response: Sendable, Equatable {
        /// Status line and fields.
        package let head: HTTPResponseHead
        /// How the body is delimited, given the request method.
        package let framing: HTTPBodyFraming
        /// Whether the connection can carry another request after this response's body.
        package let keepAlive: Bool

        /// A 1xx response other than `101 Switching Protocols`: the final response is still to come.
        package var isInterim: Bool { head.status.isInformational && head.status.code != 101 }
        /// The status code.
        package var status: HTTPStatus { head.status }
        /// The fields.
        package var headers: HTTPHeaders { head.headers }
    }

    /// The size limits applied to every head; ``HTTPHeadLimits/maxStartLineLength`` bounds the status line.
    package var limits: HTTPHeadLimits

    private var scanner = HeadScanner()

    /// Creates a parser.
    package init(limits: HTTPHeadLimits = HTTPHeadLimits()) {
        self.limits = limits
    }

    /// Forgets any partially scanned head.
    package mutating func reset() {
        scanner = HeadScanner()
    }

    /// Parses the response head at the start of `buffer`, answering a request made with `requestMethod`.
    package mutating func parse(
        _ buffer: UnsafeRawBufferPointer, requestMethod: HTTPMethod
    ) -> HTTPParseResult<Response> {
        do {
            guard let bounds = try scanner.scan(buffer, limits: limits) else { return .needMore }
            return .complete(try Self.parseHead(buffer, bounds, requestMethod: requestMethod), consumed: bounds.end)
        } catch {
            return .failed(error)
        }
    }

    /// Parses the response head at the start of `bytes`, answering a request made with `requestMethod`.
    package mutating func parse(_ bytes: [UInt8], requestMethod: HTTPMethod) -> HTTPParseResult<Response> {
        bytes.withUnsafeBytes { parse($0, requestMethod: requestMethod) }
    }

    // MARK: Second pass

    private static func parseHead(
        _ buffer: UnsafeRawBufferPointer, _ bounds: HeadScanner.Head, requestMethod: HTTPMethod
    ) throws(HTTPParseError) -> Response {
        let bytes = buffer.bytePointer
        let origin = bounds.start
        let lineEnd = bounds.startLineEnd &- 1  // The CR.

        // HTTP-version SP status-code [SP reason-phrase]. The SP before an empty phrase is required
        // by RFC 9112 §4 but often omitted, so a line that ends after the code is accepted.
        let line = UnsafeBufferPointer(start: bytes + origin, count: lineEnd &- origin)
        if line.contains(ASCII.carriageReturn) { throw .invalidLineEnding }  // A bare CR.
        guard line.count >= 12, line[8] == ASCII.space else { throw .invalidStartLine }
        let version = try HTTPVersion.parse(bytes + origin, count: 8).get()
        var code = 0
        for offset in 9..<12 {
            let digit = bytes[origin &+ offset]
            guard digit >= ASCII.zero && digit <= ASCII.nine else { throw .invalidStatusCode }
            code = code &* 10 &+ Int(digit &- ASCII.zero)
        }
        guard (100...599).contains(code) else { throw .invalidStatusCode }
        var reasonPhrase = ""
        if lineEnd &- origin > 12 {
            guard bytes[origin &+ 12] == ASCII.space else { throw .invalidStatusCode }
            let phrase = UnsafeBufferPointer(start: bytes + (origin &+ 13), count: lineEnd &- origin &- 13)
            guard phrase.allSatisfy(isFieldValueByte) else { throw .invalidStartLine }
            reasonPhrase = String(decoding: phrase, as: UTF8.self)
        }

        var framing = FramingFields()
        var fields: [HTTPHeaders.Field] = []
        try FieldLineParser.parse(
            buffer, from: bounds.startLineEnd &+ 1, to: bounds.end &- 2, origin: origin,
            into: &fields, framing: &framing)

        let status = HTTPStatus(code: code)
        let bodyFraming: HTTPBodyFraming
        // RFC 9112 §6.3: no body after HEAD, 1xx, 204 or 304, whatever the fields claim.
        if requestMethod == .head || status.isInformational || code == 204 || code == 304 {
            bodyFraming = .none
        } else if framing.hasTransferEncoding {
            bodyFraming = try framing.transferEncodingFraming()
        } else if let length = framing.contentLength {
            bodyFraming = .contentLength(length)
        } else {
            bodyFraming = .untilClose
        }
        let keepAlive = framing.keepAlive(version: version) && bodyFraming != .untilClose && code != 101

        let storage = Array(UnsafeBufferPointer(start: bytes + origin, count: bounds.end &- origin))
        let head = HTTPResponseHead(
            status: status, version: version, reasonPhrase: reasonPhrase,
            headers: HTTPHeaders(storage: storage, fields: fields))
        return Response(head: head, framing: bodyFraming, keepAlive: keepAlive)
    }
}
