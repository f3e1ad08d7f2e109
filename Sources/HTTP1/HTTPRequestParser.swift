/// An incremental parser for request heads, for the server side of a connection.
///
/// Feed it the bytes buffered for the connection, starting at the first byte not yet consumed:
///
/// ```swift
/// switch parser.parse(buffered) {
/// case .needMore: // read more, then call parse again with all unconsumed bytes
/// case .complete(let head, let consumed): // drop `consumed` bytes; the body (if any) follows
/// case .failed(let error): // answer error.statusCode, then close
/// }
/// ```
///
/// Between calls the parser remembers how far it has looked, so a head that arrives a byte at a time
/// is still scanned once. After `.complete` or `.failed` it is ready for the next head, so pipelined
/// requests are parsed by calling again with the bytes after `consumed`. If the buffered bytes are
/// replaced by unrelated ones (a new connection), call ``reset()``.
///
/// Line endings must be CR LF. A bare LF is rejected rather than accepted: lenient and strict
/// parsers disagreeing about where a line ends is how requests get smuggled.
package struct HTTPRequestParser: Sendable {
    /// The size limits applied to every head.
    package var limits: HTTPHeadLimits
    /// Whether an HTTP/1.1 request without `Host` is rejected, as RFC 9112 §3.2 requires. Default true.
    package var requiresHost: Bool

    private var scanner = HeadScanner()
    // The previous head's buffers. Once the caller drops that head they are uniquely referenced again,
    // so the next head reuses their capacity instead of allocating.
    private var storage: [UInt8] = []
    private var fields: [HTTPHeaders.Field] = []

    /// Creates a parser.
    package init(limits: HTTPHeadLimits = HTTPHeadLimits(), requiresHost: Bool = true) {
        self.limits = limits
        self.requiresHost = requiresHost
    }

    /// Forgets any partially scanned head.
    package mutating func reset() {
        scanner = HeadScanner()
    }

    /// Parses the request head at the start of `buffer`.
    package mutating func parse(_ buffer: UnsafeRawBufferPointer) -> HTTPParseResult<HTTPRequestHead> {
        do {
            guard let bounds = try scanner.scan(buffer, limits: limits) else { return .needMore }
            return .complete(try parseHead(buffer, bounds), consumed: bounds.end)
        } catch {
            return .failed(error)
        }
    }

    /// Parses the request head at the start of `bytes`.
    package mutating func parse(_ bytes: [UInt8]) -> HTTPParseResult<HTTPRequestHead> {
        bytes.withUnsafeBytes { parse($0) }
    }

    // MARK: Second pass

    private mutating func parseHead(
        _ buffer: UnsafeRawBufferPointer, _ bounds: HeadScanner.Head
    ) throws(HTTPParseError) -> HTTPRequestHead {
        let bytes = buffer.bytePointer
        let origin = bounds.start
        let lineEnd = bounds.startLineEnd &- 1  // The CR.

        // method SP
        var index = origin
        while isTokenByte(bytes[index]) { index &+= 1 }
        let methodEnd = index
        guard methodEnd > origin else { throw .invalidMethod }
        guard bytes[index] == ASCII.space else { throw Self.startLineError(bytes, at: index, lineEnd, otherwise: .invalidMethod) }
        let method = HTTPMethod(validToken: UnsafeRawBufferPointer(start: bytes + origin, count: methodEnd &- origin))

        // request-target SP
        index &+= 1
        let targetStart = index
        // The path runs to the first `?`; the query, which may hold more `?`, to the space.
        while isPathByte(bytes[index]) { index &+= 1 }
        let queryMark = bytes[index] == ASCII.questionMark ? index : -1
        while isTargetByte(bytes[index]) { index &+= 1 }
        let targetEnd = index
        if targetEnd == targetStart && (bytes[index] == ASCII.space || index == lineEnd) { throw .missingTarget }
        guard bytes[index] == ASCII.space else { throw Self.startLineError(bytes, at: index, lineEnd, otherwise: .invalidTarget) }
        let pathEnd = queryMark < 0 ? targetEnd : queryMark
        let pathStart = Self.pathStart(bytes, targetStart, pathEnd)

        // HTTP-version CR
        index &+= 1
        var scan = index
        while scan < lineEnd {
            if bytes[scan] == ASCII.space { throw .invalidStartLine }
            if bytes[scan] == ASCII.carriageReturn { throw .invalidLineEnding }
            scan &+= 1
        }
        let version = try HTTPVersion.parse(bytes + index, count: lineEnd &- index).get()

        // Field lines.
        var framing = FramingFields()
        fields.removeAll(keepingCapacity: true)
        try FieldLineParser.parse(
            buffer, from: bounds.startLineEnd &+ 1, to: bounds.end &- 2, origin: origin,
            into: &fields, framing: &framing)

        if framing.hostCount > 1 { throw .duplicateHost }
        if framing.hostCount == 0 && requiresHost && version == .http1_1 { throw .missingHost }

        let bodyFraming: HTTPBodyFraming
        if framing.hasTransferEncoding {
            bodyFraming = try framing.transferEncodingFraming()
            // RFC 9112 §6.1: an HTTP/1.0 recipient may not know chunked, so its framing is faulty.
            if version == .http1_0 { throw .invalidTransferEncoding }
        } else if let length = framing.contentLength {
            bodyFraming = .contentLength(length)
        } else {
            bodyFraming = .none
        }

        storage.removeAll(keepingCapacity: true)
        storage.append(contentsOf: UnsafeBufferPointer(start: bytes + origin, count: bounds.end &- origin))

        return HTTPRequestHead(
            method: method,
            version: version,
            headers: HTTPHeaders(storage: storage, fields: fields),
            framing: bodyFraming,
            keepAlive: framing.keepAlive(version: version),
            expectsContinue: framing.expectsContinue && version == .http1_1,
            targetStart: Int32(truncatingIfNeeded: targetStart &- origin),
            pathStart: Int32(truncatingIfNeeded: pathStart &- origin),
            pathEnd: Int32(truncatingIfNeeded: pathEnd &- origin),
            targetEnd: Int32(truncatingIfNeeded: targetEnd &- origin))
    }

    /// Names the problem when a request-line element stopped at `index` instead of at a space:
    /// the line ended too early, a bare CR, or a byte the element may not contain.
    private static func startLineError(
        _ bytes: UnsafePointer<UInt8>, at index: Int, _ lineEnd: Int, otherwise: HTTPParseError
    ) -> HTTPParseError {
        if index == lineEnd { return .invalidStartLine }
        return bytes[index] == ASCII.carriageReturn ? .invalidLineEnding : otherwise
    }

    /// Where the path begins: at the target's start, except after `scheme://authority` in absolute form.
    private static func pathStart(_ bytes: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Int {
        guard bytes[start] != ASCII.slash else { return start }
        // Absolute form: look for "://" before any "/"; the path starts at the next "/" after it.
        var index = start
        while index &+ 2 < end {
            let byte = bytes[index]
            if byte == ASCII.slash { return start }
            if byte == ASCII.colon && bytes[index &+ 1] == ASCII.slash && bytes[index &+ 2] == ASCII.slash {
                index &+= 3
                while index < end && bytes[index] != ASCII.slash { index &+= 1 }
                return index
            }
            index &+= 1
        }
        return start
    }
}
