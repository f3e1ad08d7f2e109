import Testing

@testable import HTTP1

/// Valid chunked bodies and their payloads.
let validChunkedBodies: [(body: String, payload: String)] = [
    ("0\r\n\r\n", ""),
    ("5\r\nhello\r\n0\r\n\r\n", "hello"),
    ("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world"),
    ("a\r\n0123456789\r\nA\r\nabcdefghij\r\n0\r\n\r\n", "0123456789abcdefghij"),
    ("00005\r\nhello\r\n000\r\n\r\n", "hello"),
    ("5;name=value\r\nhello\r\n0;last\r\n\r\n", "hello"),
    ("5 ;ext\r\nhello\r\n0\t;x=\"quoted; value\"\r\n\r\n", "hello"),
    ("5\r\nhello\r\n0\r\nTrailer-One: a\r\nTrailer-Two: b c\r\n\r\n", "hello"),
    ("1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", "\r\n"),
    ("3\r\n\u{0}\u{1}\u{2}\r\n0\r\n\r\n", "\u{0}\u{1}\u{2}"),
]

@Suite("Chunked decoder")
struct ChunkedDecoderTests {
    @Test("decodes valid bodies in one piece", arguments: validChunkedBodies.indices)
    func oneShot(index: Int) throws {
        let (body, payload) = validChunkedBodies[index]
        let result = try decodeChunked(bytes(body), cuts: [])
        #expect(result.payload == bytes(payload))
        #expect(result.consumed == body.utf8.count)
        #expect(result.complete)
    }

    @Test("decodes valid bodies split at every position", arguments: validChunkedBodies.indices)
    func everySplit(index: Int) throws {
        let (body, payload) = validChunkedBodies[index]
        let message = bytes(body)
        for cut in 0...message.count {
            let result = try decodeChunked(message, cuts: [cut])
            #expect(result.payload == bytes(payload), "cut at \(cut)")
            #expect(result.consumed == message.count)
            #expect(result.complete)
        }
    }

    @Test("decodes valid bodies one byte at a time and in random splits", arguments: validChunkedBodies.indices)
    func byteByByte(index: Int) throws {
        let (body, payload) = validChunkedBodies[index]
        let message = bytes(body)
        let single = try decodeChunked(message, cuts: Array(1..<max(1, message.count)))
        #expect(single.payload == bytes(payload))
        #expect(single.complete)
        var rng = SplitMix64(seed: UInt64(index))
        for round in 0..<30 {
            let cuts = randomCuts(count: message.count, pieces: 1 + round % 5, using: &rng)
            #expect(try decodeChunked(message, cuts: cuts).payload == bytes(payload), "cuts \(cuts)")
        }
    }

    @Test("a large body with many chunk sizes, split at every position of a sample")
    func largeBody() throws {
        var body: [UInt8] = []
        var expected: [UInt8] = []
        var rng = SplitMix64(seed: 99)
        for size in [1, 15, 16, 255, 256, 4095, 4096, 10_000] {
            let chunk = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
            ChunkedEncoder.appendChunk(chunk, into: &body)
            expected += chunk
        }
        ChunkedEncoder.appendLastChunk(into: &body)
        #expect(try decodeChunked(body, cuts: []).payload == expected)
        for cut in stride(from: 0, through: body.count, by: 97) {
            #expect(try decodeChunked(body, cuts: [cut]).payload == expected)
        }
        for _ in 0..<20 {
            let cuts = randomCuts(count: body.count, pieces: 50, using: &rng)
            #expect(try decodeChunked(body, cuts: cuts).payload == expected)
        }
    }

    @Test("stops after the final CR LF and leaves the next message alone")
    func stopsAtEnd() throws {
        let body = bytes("5\r\nhello\r\n0\r\n\r\n")
        let stream = body + bytes("GET / HTTP/1.1\r\n\r\n")
        var decoder = ChunkedDecoder()
        var ranges: [Range<Int>] = []
        let consumed = try decoder.decode(stream, payload: &ranges)
        #expect(consumed == body.count)
        #expect(decoder.isComplete)
        #expect(ranges == [3..<8])
        #expect(decoder.decodedByteCount == 5)
    }

    @Test("consumes every byte while the body is incomplete, reporting payload as it comes")
    func partialPayload() throws {
        var decoder = ChunkedDecoder()
        var ranges: [Range<Int>] = []
        #expect(try decoder.decode(bytes("a\r\n0123"), payload: &ranges) == 7)
        #expect(ranges == [3..<7])
        ranges.removeAll()
        #expect(try decoder.decode(bytes("456789\r"), payload: &ranges) == 7)
        #expect(ranges == [0..<6])
        #expect(!decoder.isComplete)
        ranges.removeAll()
        #expect(try decoder.decode(bytes("\n0\r\n\r\n"), payload: &ranges) == 6)
        #expect(ranges.isEmpty)
        #expect(decoder.isComplete)
        #expect(decoder.decodedByteCount == 10)
        decoder.reset()
        #expect(!decoder.isComplete)
        #expect(decoder.decodedByteCount == 0)
    }

    @Test("an empty feed consumes nothing")
    func emptyFeed() throws {
        var decoder = ChunkedDecoder()
        var ranges: [Range<Int>] = []
        #expect(try decoder.decode([], payload: &ranges) == 0)
        #expect(ranges.isEmpty)
    }

    // MARK: Errors

    static let malformed: [(String, String, ChunkedDecodingError)] = [
        ("not hex", "zz\r\n", .invalidChunkSize),
        ("empty size", "\r\n", .invalidChunkSize),
        ("negative size", "-5\r\n", .invalidChunkSize),
        ("0x prefix", "0x5\r\nhello\r\n", .invalidChunkSize),
        ("leading space", " 5\r\nhello\r\n", .invalidChunkSize),
        ("garbage after whitespace", "5 x\r\nhello\r\n", .invalidChunkSize),
        ("garbage after size", "5g\r\nhello\r\n", .invalidChunkSize),
        ("semicolon without size", ";x\r\n", .invalidChunkSize),
        ("bare LF after size", "5\nhello\r\n", .invalidLineEnding),
        ("bare LF after whitespace", "5 \nhello\r\n", .invalidLineEnding),
        ("bare LF in extension", "5;x\nhello\r\n", .invalidLineEnding),
        ("CR without LF after size", "5\rhello\r\n", .invalidLineEnding),
        ("control byte in extension", "5;x\u{1}\r\nhello\r\n", .invalidChunkExtension),
        ("NUL in extension", "5;\u{0}\r\nhello\r\n", .invalidChunkExtension),
        ("data longer than size", "5\r\nhelloX\r\n", .missingCRLFAfterData),
        ("LF without CR after data", "5\r\nhello\n0\r\n\r\n", .missingCRLFAfterData),
        ("CR then garbage after data", "5\r\nhello\rX", .missingCRLFAfterData),
        ("2^63", "8000000000000000\r\n", .chunkTooLarge),
        ("17 hex digits", "FFFFFFFFFFFFFFFFF\r\n", .chunkTooLarge),
        ("overflow with leading zeros kept", "000000000000000000008000000000000000\r\n", .chunkTooLarge),
        ("bare LF ending trailers", "0\r\nX: y\r\n\n", .invalidLineEnding),
        ("bare LF after last chunk", "0\r\n\n", .invalidLineEnding),
        ("bare LF in trailer", "0\r\nX: y\nZ: w\r\n\r\n", .invalidLineEnding),
        ("CR without LF in trailer", "0\r\nX: y\rZ\r\n\r\n", .invalidLineEnding),
        ("NUL in trailer", "0\r\nX: \u{0}\r\n\r\n", .invalidTrailer),
        ("folded trailer", "0\r\n continued\r\n\r\n", .invalidTrailer),
        ("CR then garbage after last chunk", "0\r\n\rX", .invalidLineEnding),
    ]

    @Test("malformed bodies fail with their specific error", arguments: malformed.indices)
    func malformedBodies(index: Int) {
        let (_, body, error) = Self.malformed[index]
        #expect(throws: error) { try decodeChunked(bytes(body), cuts: []) }
        let message = bytes(body)
        #expect(throws: error) { try decodeChunked(message, cuts: Array(1..<message.count)) }
    }

    @Test("chunk size at the configured maximum passes; one more fails")
    func maxChunkSize() throws {
        let limits = ChunkedDecoder.Limits(maxChunkSize: 16)
        #expect(try decodeChunked(bytes("10\r\n0123456789abcdef\r\n0\r\n\r\n"), cuts: [], limits: limits).complete)
        #expect(throws: ChunkedDecodingError.chunkTooLarge) {
            try decodeChunked(bytes("11\r\n"), cuts: [], limits: limits)
        }
        let tiny = ChunkedDecoder.Limits(maxChunkSize: 10)
        #expect(throws: ChunkedDecodingError.chunkTooLarge) { try decodeChunked(bytes("c\r\n"), cuts: [], limits: tiny) }
    }

    @Test("Int64.max is a representable chunk size")
    func int64Max() throws {
        var decoder = ChunkedDecoder()
        var ranges: [Range<Int>] = []
        #expect(try decoder.decode(bytes("7FFFFFFFFFFFFFFF\r\nabc"), payload: &ranges) == 21)
        #expect(ranges == [18..<21])
    }

    @Test("chunk line exactly at the limit passes; one more byte fails")
    func chunkLineLimit() throws {
        let limits = ChunkedDecoder.Limits(maxChunkLineLength: 10)
        let atLimit = "5;abcdefgh"  // 10 bytes
        #expect(try decodeChunked(bytes(atLimit + "\r\nhello\r\n0\r\n\r\n"), cuts: [], limits: limits).payload == bytes("hello"))
        #expect(throws: ChunkedDecodingError.chunkLineTooLong) {
            try decodeChunked(bytes(atLimit + "i\r\nhello\r\n0\r\n\r\n"), cuts: [], limits: limits)
        }
        #expect(throws: ChunkedDecodingError.chunkLineTooLong) {
            try decodeChunked(bytes(String(repeating: "0", count: 11) + "\r\n\r\n"), cuts: [], limits: limits)
        }
        // The limit is per line: many lines each under it are fine.
        let many = String(repeating: "1;abcdefgh\r\nx\r\n", count: 20) + "0\r\n\r\n"
        #expect(try decodeChunked(bytes(many), cuts: [], limits: limits).payload.count == 20)
    }

    @Test("trailer section exactly at the limit passes; one more byte fails")
    func trailerLimit() throws {
        let trailers = "X-A: 1234\r\n\r\n"  // 13 bytes
        let limits = ChunkedDecoder.Limits(maxTrailerSize: 13)
        #expect(try decodeChunked(bytes("0\r\n" + trailers), cuts: [], limits: limits).complete)
        #expect(throws: ChunkedDecodingError.trailersTooLarge) {
            try decodeChunked(bytes("0\r\nX-A: 12345\r\n\r\n"), cuts: [], limits: limits)
        }
        let endless = bytes("0\r\n" + String(repeating: "X: y\r\n", count: 10_000))
        #expect(throws: ChunkedDecodingError.trailersTooLarge) { try decodeChunked(endless, cuts: []) }
    }

    @Test("error codes and statuses")
    func errorCodes() {
        let all: [ChunkedDecodingError] = [.invalidChunkSize, .chunkLineTooLong, .chunkTooLarge, .invalidChunkExtension,
            .invalidLineEnding, .missingCRLFAfterData, .trailersTooLarge, .invalidTrailer]
        #expect(Set(all.map(\.code)).count == all.count)
        #expect(ChunkedDecodingError.chunkTooLarge.statusCode == 413)
        #expect(ChunkedDecodingError.trailersTooLarge.statusCode == 431)
        #expect(ChunkedDecodingError.invalidChunkSize.statusCode == 400)
        #expect(ChunkedDecodingError.missingCRLFAfterData.description == "missing_chunk_crlf (400)")
    }
}

@Suite("Chunked encoder")
struct ChunkedEncoderTests {
    @Test("chunk headers are hex without leading zeros", arguments: [
        (1, "1\r\n"), (9, "9\r\n"), (10, "A\r\n"), (15, "F\r\n"), (16, "10\r\n"), (255, "FF\r\n"),
        (4096, "1000\r\n"), (Int.max, "7FFFFFFFFFFFFFFF\r\n"),
    ])
    func header(length: Int, expected: String) {
        var buffer: [UInt8] = []
        ChunkedEncoder.appendChunkHeader(length: length, into: &buffer)
        #expect(buffer == bytes(expected))
        #expect(ChunkedEncoder.framingOverhead(length: length) == expected.utf8.count + 2)
    }

    @Test("whole chunks, the last chunk, and appending to existing content")
    func chunks() {
        var buffer = bytes("HEAD")
        ChunkedEncoder.appendChunk(bytes("hello"), into: &buffer)
        ChunkedEncoder.appendChunk([], into: &buffer)
        ChunkedEncoder.appendChunkHeader(length: 2, into: &buffer)
        buffer += bytes("hi")
        ChunkedEncoder.appendChunkEnd(into: &buffer)
        ChunkedEncoder.appendLastChunk(into: &buffer)
        #expect(buffer == bytes("HEAD5\r\nhello\r\n2\r\nhi\r\n0\r\n\r\n"))
        #expect("\(ChunkedEncoder.lastChunk)" == "0\r\n\r\n")
    }

    @Test("encoded bodies decode to the same payload")
    func roundTrip() throws {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<50 {
            var body: [UInt8] = []
            var expected: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                let chunk = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                ChunkedEncoder.appendChunk(chunk, into: &body)
                expected += chunk
            }
            ChunkedEncoder.appendLastChunk(into: &body)
            let cuts = randomCuts(count: body.count, pieces: 8, using: &rng)
            let decoded = try decodeChunked(body, cuts: cuts)
            #expect(decoded.payload == expected)
            #expect(decoded.consumed == body.count)
        }
    }
}
