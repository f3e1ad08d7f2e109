extension ChunkedDecoder {
    /// Decodes as much of `buffer` as `destination` can hold the payload of, copying the payload to
    /// the front of `destination`: a client reading a chunked body into a caller's buffer.
    ///
    /// - Returns: how many bytes of `buffer` were consumed, and how many payload bytes were copied
    ///   (0 when the consumed bytes were framing only).
    /// - Throws: ``ChunkedDecodingError``; the decoder is then unusable until ``reset()``.
    package mutating func decode(
        _ buffer: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) throws(ChunkedDecodingError) -> (consumed: Int, copied: Int) {
        // The payload in `fed` bytes is at most `fed` bytes long, so it fits.
        let fed = UnsafeRawBufferPointer(rebasing: buffer[0..<min(destination.count, buffer.count)])
        var ranges: [Range<Int>] = []
        let consumed = try decode(fed, payload: &ranges)
        var copied = 0
        for range in ranges where !range.isEmpty {
            (destination.baseAddress! + copied).copyMemory(from: fed.baseAddress! + range.lowerBound, byteCount: range.count)
            copied += range.count
        }
        return (consumed, copied)
    }
}
