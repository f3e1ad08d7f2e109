import HTTP1

/// Properties of the chunked-body decoder and encoder on arbitrary bytes.
enum ChunkedFuzz {
    /// The decoder's outcome: payload bytes, bytes consumed, whether the body ended, or the error.
    private struct Outcome: Equatable {
        var payload: [UInt8] = []
        var consumed = 0
        var complete = false
        var error: ChunkedDecodingError?
    }

    static func check(_ input: UnsafeRawBufferPointer) -> String? {
        let limits = ChunkedDecoder.Limits(maxChunkLineLength: 256, maxChunkSize: 1 << 20, maxTrailerSize: 1024)
        guard input.count > 0 else { return nil }
        // The first byte steers the piece sizes; the rest is the body.
        let step = Int(input[0] % 7) + 1
        let body = UnsafeRawBufferPointer(rebasing: input[1...])

        let whole = decode(body, pieces: [body.count], limits: limits)
        if whole.payload.count > body.count { return "\(whole.payload.count) payload bytes from a \(body.count)-byte body" }
        if whole.consumed > body.count { return "consumed \(whole.consumed) of \(body.count) bytes" }

        var pieces: [Int] = []
        var remaining = body.count
        var size = step
        while remaining > 0 {
            pieces.append(min(size, remaining))
            remaining -= min(size, remaining)
            size = size % 7 + 1
        }
        let piecewise = decode(body, pieces: pieces, limits: limits)
        // On an error only the error is compared: pieces decoded before the bad byte have already
        // been handed out, which one-shot decoding of the same bytes never reports.
        let agree = whole.error != nil ? piecewise.error == whole.error : piecewise == whole
        if !agree {
            return "pieces \(pieces.prefix(8))… decoded \(piecewise.payload.count) bytes, complete \(piecewise.complete), "
                + "error \(String(describing: piecewise.error)); one shot \(whole.payload.count), \(whole.complete), \(String(describing: whole.error))"
        }

        // Round trip: the body bytes as payload, cut into chunks of fuzzer-chosen sizes.
        var encoded: [UInt8] = []
        var offset = 0
        var chunk = step * 3
        while offset < body.count {
            let take = min(chunk, body.count - offset)
            ChunkedEncoder.appendChunk(UnsafeRawBufferPointer(rebasing: body[offset..<(offset + take)]), into: &encoded)
            offset += take
            chunk = chunk * 5 % 97 + 1
        }
        ChunkedEncoder.appendLastChunk(into: &encoded)
        let decoded = encoded.withUnsafeBytes { decode($0, pieces: [$0.count], limits: limits) }
        if decoded.error != nil || !decoded.complete || decoded.payload != Array(body) || decoded.consumed != encoded.count {
            return "round trip of \(body.count) bytes gave \(decoded.payload.count) bytes, complete \(decoded.complete), error \(String(describing: decoded.error))"
        }
        return nil
    }

    /// Feeds `body` to a fresh decoder in pieces of the given sizes, as a connection would (unconsumed
    /// bytes are offered again with the next piece).
    private static func decode(_ body: UnsafeRawBufferPointer, pieces: [Int], limits: ChunkedDecoder.Limits) -> Outcome {
        var decoder = ChunkedDecoder(limits: limits)
        var outcome = Outcome()
        var start = 0
        var end = 0
        var ranges: [Range<Int>] = []
        for piece in pieces {
            end += piece
            let available = UnsafeRawBufferPointer(rebasing: body[start..<end])
            ranges.removeAll(keepingCapacity: true)
            do {
                let consumed = try decoder.decode(available, payload: &ranges)
                for range in ranges { outcome.payload += available[range] }
                start += consumed
                outcome.consumed = start
                if decoder.isComplete {
                    outcome.complete = true
                    return outcome
                }
            } catch {
                outcome.error = error
                return outcome
            }
        }
        return outcome
    }
}
