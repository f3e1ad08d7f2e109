/// Chunk framing for sending a body with `Transfer-Encoding: chunked`.
///
/// The framing is written into the caller's buffer and the payload is left to the caller, so a
/// large payload can go out with `writev` or `sendfile` between a chunk's header and its CR LF.
package enum ChunkedEncoder {
    /// The bytes that end a chunked body: the last chunk and an empty trailer section.
    package static let lastChunk: StaticString = "0\r\n\r\n"

    /// Appends the line that announces a chunk of `length` bytes: the size in hex and CR LF.
    ///
    /// `length` must be positive: a zero-length chunk would end the body.
    package static func appendChunkHeader(length: Int, into buffer: inout [UInt8]) {
        precondition(length > 0, "a chunk of zero bytes would end the body; use appendLastChunk")
        buffer.appendHexadecimal(UInt64(length))
        buffer.appendCRLF()
    }

    /// Appends the CR LF that must follow every chunk's data.
    package static func appendChunkEnd(into buffer: inout [UInt8]) {
        buffer.appendCRLF()
    }

    /// Appends a whole chunk: header, `payload`, CR LF. An empty payload appends nothing.
    package static func appendChunk(_ payload: UnsafeRawBufferPointer, into buffer: inout [UInt8]) {
        guard !payload.isEmpty else { return }
        appendChunkHeader(length: payload.count, into: &buffer)
        buffer.append(contentsOf: payload)
        buffer.appendCRLF()
    }

    /// Appends a whole chunk holding `payload`. An empty payload appends nothing.
    package static func appendChunk(_ payload: [UInt8], into buffer: inout [UInt8]) {
        payload.withUnsafeBytes { appendChunk($0, into: &buffer) }
    }

    /// Appends `0` CR LF CR LF, which ends the body.
    package static func appendLastChunk(into buffer: inout [UInt8]) {
        buffer.append(staticString: lastChunk)
    }

    /// How many framing bytes surround a chunk of `length` bytes (header plus trailing CR LF),
    /// for sizing buffers.
    package static func framingOverhead(length: Int) -> Int {
        precondition(length > 0, "chunks have positive length")
        var digits = 1
        var rest = UInt64(length) >> 4
        while rest != 0 {
            digits += 1
            rest >>= 4
        }
        return digits + 4
    }
}
