import Testing

@testable import HTTP1

/// `decode(_:into:)`, the form both HTTP clients read chunked bodies with: a caller's buffer of
/// any size, down to one byte, gets the payload and nothing else.
@Suite("Chunked decoder into a caller's buffer")
struct ChunkedDecoderCopyingTests {
    @Test("every valid body comes out whole through buffers of 1, 2, 3, 7 and 64 bytes", arguments: validChunkedBodies.indices)
    func smallDestinations(index: Int) throws {
        let (body, payload) = validChunkedBodies[index]
        let input = Array(body.utf8)
        for size in [1, 2, 3, 7, 64] {
            var decoder = ChunkedDecoder()
            var output: [UInt8] = []
            var position = 0
            var destination = [UInt8](repeating: 0, count: size)
            while !decoder.isComplete {
                try #require(position < input.count, "the body ended before the decoder completed (buffer \(size))")
                let (consumed, copied) = try input.withUnsafeBytes { raw in
                    try destination.withUnsafeMutableBytes { target in
                        try decoder.decode(UnsafeRawBufferPointer(rebasing: raw[position...]), into: target)
                    }
                }
                #expect(consumed <= size && copied <= consumed)
                output += destination[0..<copied]
                position += consumed
            }
            #expect(output == Array(payload.utf8), "buffer \(size)")
            #expect(position == input.count, "buffer \(size)")
        }
    }

    @Test("a framing error is thrown, not copied")
    func framingErrors() {
        var decoder = ChunkedDecoder()
        let input = Array("zz\r\nhello\r\n0\r\n\r\n".utf8)
        var destination = [UInt8](repeating: 0, count: 32)
        #expect(throws: ChunkedDecodingError.self) {
            _ = try input.withUnsafeBytes { raw in
                try destination.withUnsafeMutableBytes { try decoder.decode(raw, into: $0) }
            }
        }
    }
}
