import Testing

@testable import HTTP1

/// The bytes of a string literal, written with `\r\n` spelled out so line endings are explicit.
func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

/// A small deterministic generator, so random splits are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Sorted, distinct cut points strictly inside 1..<count.
func randomCuts(count: Int, pieces: Int, using rng: inout SplitMix64) -> [Int] {
    guard count > 1 else { return [] }
    var cuts = Set<Int>()
    for _ in 0..<pieces { cuts.insert(Int.random(in: 1..<count, using: &rng)) }
    return cuts.sorted()
}

extension HTTPParseResult {
    var isNeedMore: Bool {
        if case .needMore = self { return true }
        return false
    }
    var error: HTTPParseError? {
        if case .failed(let error) = self { return error }
        return nil
    }
    var value: Head? {
        if case .complete(let head, _) = self { return head }
        return nil
    }
    var consumed: Int? {
        if case .complete(_, let consumed) = self { return consumed }
        return nil
    }
}

/// Feeds growing prefixes of `message` (ending at each of `ends`, then the whole message) to one
/// parser, the way a server re-parses its buffer after each read. Returns the first result that is
/// not `.needMore`, and the prefix length at which it came.
func feedPrefixes<Head>(
    _ message: [UInt8], ends: [Int], parse: (UnsafeRawBufferPointer) -> HTTPParseResult<Head>
) -> (result: HTTPParseResult<Head>, at: Int) {
    message.withUnsafeBytes { whole in
        for end in ends + [message.count] {
            let result = parse(UnsafeRawBufferPointer(rebasing: whole[0..<end]))
            if !result.isNeedMore { return (result, end) }
        }
        return (.needMore, message.count)
    }
}

/// Parses a request in one shot with a fresh parser.
func parseRequest(_ message: [UInt8], limits: HTTPHeadLimits = HTTPHeadLimits(), requiresHost: Bool = true)
    -> HTTPParseResult<HTTPRequestHead>
{
    var parser = HTTPRequestParser(limits: limits, requiresHost: requiresHost)
    return parser.parse(message)
}

/// Parses a request fed one byte at a time.
func parseRequestByteByByte(
    _ message: [UInt8], limits: HTTPHeadLimits = HTTPHeadLimits(), requiresHost: Bool = true
) -> (result: HTTPParseResult<HTTPRequestHead>, at: Int) {
    var parser = HTTPRequestParser(limits: limits, requiresHost: requiresHost)
    return feedPrefixes(message, ends: Array(0..<message.count)) { parser.parse($0) }
}

/// Decodes a whole chunked body fed in pieces cut at `cuts`, returning the payload, the bytes
/// consumed in total, and whether the decoder saw the end.
func decodeChunked(
    _ body: [UInt8], cuts: [Int], limits: ChunkedDecoder.Limits = ChunkedDecoder.Limits()
) throws(ChunkedDecodingError) -> (payload: [UInt8], consumed: Int, complete: Bool) {
    var decoder = ChunkedDecoder(limits: limits)
    var payload: [UInt8] = []
    var ranges: [Range<Int>] = []
    var consumed = 0
    var start = 0
    for end in cuts + [body.count] where end >= start {
        let piece = Array(body[start..<end])
        ranges.removeAll(keepingCapacity: true)
        let used = try decoder.decode(piece, payload: &ranges)
        for range in ranges { payload += piece[range] }
        consumed += used
        start = end
        if decoder.isComplete { break }
    }
    return (payload, consumed, decoder.isComplete)
}
