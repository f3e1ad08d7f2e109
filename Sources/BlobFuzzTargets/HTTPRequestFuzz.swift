import HTTP1

/// Properties of the request-head parser on arbitrary bytes.
enum HTTPRequestFuzz {
    /// The daemon's limits, so the fuzzer explores what blobd really accepts.
    static let limits = HTTPHeadLimits(maxStartLineLength: 8 * 1024, maxHeadSize: 32 * 1024, maxHeaderCount: 100)

    static func check(_ input: UnsafeRawBufferPointer) -> String? {
        var whole = HTTPRequestParser(limits: limits, requiresHost: false)
        let oneShot = whole.parse(input)
        if let problem = bounds(oneShot, count: input.count) { return "one shot: " + problem }

        // The same bytes arriving in two reads, split where the first byte says: the parser keeps
        // state between calls, and must reach the same answer.
        if input.count > 1 {
            let split = Int(input[0]) % input.count
            var piecewise = HTTPRequestParser(limits: limits, requiresHost: false)
            var result = piecewise.parse(UnsafeRawBufferPointer(rebasing: input[..<split]))
            if let problem = bounds(result, count: split) { return "first piece: " + problem }
            if case .needMore = result { result = piecewise.parse(input) }
            if !sameOutcome(result, oneShot, prefixLength: split) {
                return "split at \(split) gave \(describe(result)), one shot gave \(describe(oneShot))"
            }
        }

        // Pipelining: after a complete head the parser is ready for the next one.
        if case .complete(_, let consumed) = oneShot, consumed < input.count {
            let next = whole.parse(UnsafeRawBufferPointer(rebasing: input[consumed...]))
            if let problem = bounds(next, count: input.count - consumed) { return "pipelined head: " + problem }
        }
        return nil
    }

    /// A complete head lies inside the input and inside the limits.
    private static func bounds(_ result: HTTPParseResult<HTTPRequestHead>, count: Int) -> String? {
        guard case .complete(let head, let consumed) = result else { return nil }
        if consumed <= 0 || consumed > count { return "consumed \(consumed) of \(count) bytes" }
        if consumed > limits.maxHeadSize { return "a \(consumed)-byte head passed the \(limits.maxHeadSize)-byte limit" }
        if head.headers.count > limits.maxHeaderCount { return "\(head.headers.count) fields passed the limit" }
        if head.targetBytes.isEmpty { return "empty request target" }
        if head.targetBytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { return "request target holds a space or control byte" }
        if case .contentLength(let length) = head.framing, length < 0 { return "negative Content-Length \(length)" }
        return nil
    }

    /// Whether a piecewise result agrees with the one-shot one. A head completed within the first
    /// piece is a prefix's head: it must equal the one-shot head.
    private static func sameOutcome(
        _ piecewise: HTTPParseResult<HTTPRequestHead>, _ oneShot: HTTPParseResult<HTTPRequestHead>, prefixLength: Int
    ) -> Bool {
        switch (piecewise, oneShot) {
        case (.needMore, .needMore): return true
        case (.complete(let a, let ca), .complete(let b, let cb)): return a == b && ca == cb
        case (.failed(let a), .failed(let b)): return a == b
        // Limits on a partial head may trip earlier on the first piece than on the whole: both refuse.
        default: return false
        }
    }

    private static func describe(_ result: HTTPParseResult<HTTPRequestHead>) -> String {
        switch result {
        case .needMore: return "needMore"
        case .complete(let head, let consumed): return "complete(\(head.method.token) \(head.target), consumed \(consumed))"
        case .failed(let error): return "failed(\(error))"
        }
    }
}
