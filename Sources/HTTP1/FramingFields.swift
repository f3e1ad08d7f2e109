/// What the framing-relevant fields of one head say, gathered while the fields are parsed.
///
/// Interpreting them in the same pass avoids a second search of the fields; the request and response
/// parsers then turn this into ``HTTPBodyFraming`` and a keep-alive decision with their own rules.
struct FramingFields: Sendable {
    /// The agreed `Content-Length`, if any field carried one.
    var contentLength: Int64?
    /// A `Transfer-Encoding` field was present.
    var hasTransferEncoding = false
    /// Transfer codings listed, across all `Transfer-Encoding` fields.
    var codingCount = 0
    /// How many of them were `chunked`.
    var chunkedCount = 0
    /// The last coding listed was `chunked`.
    var chunkedIsLast = false
    /// A coding other than `chunked` was listed.
    var hasUnsupportedCoding = false
    /// `Connection` listed `close`.
    var connectionClose = false
    /// `Connection` listed `keep-alive`.
    var connectionKeepAlive = false
    /// `Expect` was `100-continue`.
    var expectsContinue = false
    /// Number of `Host` fields.
    var hostCount = 0

    /// Folds one known field into the summary. Values are already trimmed of surrounding whitespace.
    @inline(__always)
    mutating func interpret(_ known: UInt8, _ value: UnsafeRawBufferPointer) throws(HTTPParseError) {
        switch known {
        case KnownHeader.contentLength.rawValue:
            let length = try Self.parseContentLength(value)
            if let contentLength, contentLength != length { throw .conflictingContentLength }
            contentLength = length
        case KnownHeader.transferEncoding.rawValue:
            hasTransferEncoding = true
            Self.forEachListElement(value) { coding in
                codingCount &+= 1
                let isChunked = equalsLowercase(coding.bytePointer, coding.count, "chunked")
                if isChunked { chunkedCount &+= 1 } else { hasUnsupportedCoding = true }
                chunkedIsLast = isChunked
            }
        case KnownHeader.connection.rawValue:
            Self.forEachListElement(value) { option in
                if equalsLowercase(option.bytePointer, option.count, "close") { connectionClose = true }
                if equalsLowercase(option.bytePointer, option.count, "keep-alive") { connectionKeepAlive = true }
            }
        case KnownHeader.expect.rawValue:
            if equalsLowercase(value.bytePointer, value.count, "100-continue") { expectsContinue = true }
        case KnownHeader.host.rawValue:
            hostCount &+= 1
        default:
            break
        }
    }

    /// `Transfer-Encoding` framing shared by requests and responses, checked in the order that names
    /// the most specific problem: ambiguity first (smuggling), then malformed lists, then codings we lack.
    func transferEncodingFraming() throws(HTTPParseError) -> HTTPBodyFraming {
        if contentLength != nil { throw .contentLengthWithTransferEncoding }
        if chunkedCount > 1 || (chunkedCount == 1 && !chunkedIsLast) { throw .invalidTransferEncoding }
        if hasUnsupportedCoding { throw .unsupportedTransferCoding }
        if codingCount == 0 { throw .invalidTransferEncoding }
        return .chunked
    }

    /// Keep-alive as RFC 9112 §9.3 decides it: 1.1 persists unless `close`; 1.0 only with `keep-alive`.
    func keepAlive(version: HTTPVersion) -> Bool {
        if connectionClose { return false }
        return version == .http1_1 || connectionKeepAlive
    }

    /// `1*DIGIT`, nothing else: no sign, no inner spaces, no list of repeated values.
    static func parseContentLength(_ value: UnsafeRawBufferPointer) throws(HTTPParseError) -> Int64 {
        guard !value.isEmpty else { throw .invalidContentLength }
        var result: Int64 = 0
        for byte in value {
            guard byte >= ASCII.zero && byte <= ASCII.nine else { throw .invalidContentLength }
            let (shifted, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int64(byte &- ASCII.zero))
            guard !overflow1 && !overflow2 else { throw .invalidContentLength }
            result = sum
        }
        return result
    }

    /// Calls `body` with each non-empty element of a comma-separated list, trimmed of whitespace.
    ///
    /// Empty elements are skipped, as RFC 9110 §5.6.1 requires of recipients.
    @inline(__always)
    static func forEachListElement(_ value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let base = value.baseAddress else { return }
        let count = value.count
        var start = 0
        while start < count {
            var end = start
            while end < count && value[end] != ASCII.comma { end &+= 1 }
            var first = start
            var last = end
            while first < last && isWhitespace(value[first]) { first &+= 1 }
            while last > first && isWhitespace(value[last &- 1]) { last &-= 1 }
            if last > first { body(UnsafeRawBufferPointer(start: base + first, count: last &- first)) }
            start = end &+ 1
        }
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes as typed pointer, for the comparison helpers.
    @inline(__always)
    var bytePointer: UnsafePointer<UInt8> { baseAddress!.assumingMemoryBound(to: UInt8.self) }
}
