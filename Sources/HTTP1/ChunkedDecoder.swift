/// An incremental decoder for `Transfer-Encoding: chunked` bodies (RFC 9112 §7.1).
///
/// Feed it whatever body bytes have arrived; it reports where the payload lies within them and
/// keeps its place between calls, so a body can arrive in pieces of any size, down to one byte:
///
/// ```swift
/// var payload: [Range<Int>] = []  // reused across calls
/// let consumed = try decoder.decode(buffered, payload: &payload)
/// for range in payload { write(buffered[range]) }
/// // drop `consumed` bytes; if decoder.isComplete, the next message starts there
/// ```
///
/// Every fed byte is consumed until the body ends; then decoding stops right after the final CR LF,
/// so bytes of a pipelined next message are left alone. Chunk extensions are ignored; trailer fields
/// are skipped (never merged into the head), within ``Limits/maxTrailerSize``.
package struct ChunkedDecoder: Sendable {
    /// Bounds on what a peer can make the decoder accept.
    package struct Limits: Sendable, Hashable {
        /// Longest chunk-size line (size plus extensions, without CR LF). Default 4 KiB.
        package var maxChunkLineLength: Int
        /// Largest single chunk. Default and ceiling `Int64.max`.
        package var maxChunkSize: Int64
        /// Longest trailer section, counting every byte after the last chunk's line. Default 16 KiB.
        package var maxTrailerSize: Int

        /// Creates limits.
        package init(maxChunkLineLength: Int = 4096, maxChunkSize: Int64 = .max, maxTrailerSize: Int = 16 * 1024) {
            precondition(maxChunkLineLength > 0 && maxChunkSize >= 0 && maxTrailerSize >= 2, "limits must be positive")
            self.maxChunkLineLength = maxChunkLineLength
            self.maxChunkSize = maxChunkSize
            self.maxTrailerSize = maxTrailerSize
        }
    }

    /// Where in the framing the next byte falls.
    private enum State: Sendable {
        case size, sizeWhitespace, chunkExtension, sizeLineFeed
        case data, dataCarriageReturn, dataLineFeed
        case trailerLineStart, trailerLine, trailerLineFeed, finalLineFeed
        case done
    }

    /// The limits in force.
    package let limits: Limits
    /// Whether the last chunk and the trailer section have been read.
    package var isComplete: Bool { state == .done }
    /// Payload bytes reported so far, for enforcing a body size limit.
    package private(set) var decodedByteCount: Int64 = 0

    private var state = State.size
    /// The size being read, then the data left in the current chunk.
    private var remaining: Int64 = 0
    private var sizeDigits = 0
    private var lineLength = 0
    private var trailerSize = 0

    /// Creates a decoder at the start of a body.
    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Starts over for a new body.
    package mutating func reset() {
        self = ChunkedDecoder(limits: limits)
    }

    /// Decodes the framing in `buffer` and appends the ranges of payload bytes to `payload`.
    ///
    /// - Returns: how many bytes of `buffer` were consumed: all of them until the body is complete,
    ///   then only those up to its end.
    /// - Throws: ``ChunkedDecodingError``; the decoder is then unusable until ``reset()``.
    package mutating func decode(
        _ buffer: UnsafeRawBufferPointer, payload: inout [Range<Int>]
    ) throws(ChunkedDecodingError) -> Int {
        let count = buffer.count
        var index = 0
        while index < count {
            if state == .data {
                // The payload is reported, not copied: one range per chunk piece.
                let available = Int64(count &- index)
                let take = Int(min(remaining, available))
                payload.append(index..<(index &+ take))
                index &+= take
                remaining &-= Int64(take)
                decodedByteCount &+= Int64(take)
                if remaining == 0 { state = .dataCarriageReturn }
                continue
            }
            let byte = buffer[index]
            index &+= 1
            try step(byte)
            if state == .done { return index }
        }
        return index
    }

    /// Decodes the framing in `bytes`; see ``decode(_:payload:)-(UnsafeRawBufferPointer,_)``.
    package mutating func decode(_ bytes: [UInt8], payload: inout [Range<Int>]) throws(ChunkedDecodingError) -> Int {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(ChunkedDecodingError) in try decode(buffer, payload: &payload) }
        }
        return try result.get()
    }

    /// Advances the state machine over one framing byte.
    @inline(__always)
    private mutating func step(_ byte: UInt8) throws(ChunkedDecodingError) {
        switch state {
        case .size:
            if let digit = hexValue(byte) {
                let (shifted, overflowed) = remaining.multipliedReportingOverflow(by: 16)
                let size = shifted &+ Int64(digit)  // Cannot wrap: `shifted` is a multiple of 16 ≤ Int64.max.
                guard !overflowed && size <= limits.maxChunkSize else { throw .chunkTooLarge }
                remaining = size
                sizeDigits &+= 1
                try countLineByte()
                return
            }
            guard sizeDigits > 0 else { throw .invalidChunkSize }
            switch byte {
            case ASCII.carriageReturn: state = .sizeLineFeed
            case ASCII.semicolon: state = .chunkExtension; try countLineByte()
            case ASCII.space, ASCII.tab: state = .sizeWhitespace; try countLineByte()  // BWS before `;`
            case ASCII.lineFeed: throw .invalidLineEnding
            default: throw .invalidChunkSize
            }
        case .sizeWhitespace:
            switch byte {
            case ASCII.space, ASCII.tab: try countLineByte()
            case ASCII.semicolon: state = .chunkExtension; try countLineByte()
            case ASCII.carriageReturn: state = .sizeLineFeed
            case ASCII.lineFeed: throw .invalidLineEnding
            default: throw .invalidChunkSize
            }
        case .chunkExtension:
            if byte == ASCII.carriageReturn {
                state = .sizeLineFeed
            } else if byte == ASCII.lineFeed {
                throw .invalidLineEnding
            } else {
                guard isFieldValueByte(byte) else { throw .invalidChunkExtension }
                try countLineByte()
            }
        case .sizeLineFeed:
            guard byte == ASCII.lineFeed else { throw .invalidLineEnding }
            state = remaining == 0 ? .trailerLineStart : .data
        case .dataCarriageReturn:
            guard byte == ASCII.carriageReturn else { throw .missingCRLFAfterData }
            state = .dataLineFeed
        case .dataLineFeed:
            guard byte == ASCII.lineFeed else { throw .missingCRLFAfterData }
            state = .size
            sizeDigits = 0
            lineLength = 0
        case .trailerLineStart:
            try countTrailerByte()
            if byte == ASCII.carriageReturn {
                state = .finalLineFeed
            } else {
                guard isFieldValueByte(byte) && !isWhitespace(byte) else {
                    throw byte == ASCII.lineFeed ? .invalidLineEnding : .invalidTrailer
                }
                state = .trailerLine
            }
        case .trailerLine:
            try countTrailerByte()
            if byte == ASCII.carriageReturn {
                state = .trailerLineFeed
            } else if byte == ASCII.lineFeed {
                throw .invalidLineEnding
            } else if !isFieldValueByte(byte) {
                throw .invalidTrailer
            }
        case .trailerLineFeed:
            try countTrailerByte()
            guard byte == ASCII.lineFeed else { throw .invalidLineEnding }
            state = .trailerLineStart
        case .finalLineFeed:
            try countTrailerByte()
            guard byte == ASCII.lineFeed else { throw .invalidLineEnding }
            state = .done
        case .data, .done:
            preconditionFailure("handled by decode")
        }
    }

    @inline(__always)
    private mutating func countLineByte() throws(ChunkedDecodingError) {
        lineLength &+= 1
        if lineLength > limits.maxChunkLineLength { throw .chunkLineTooLong }
    }

    @inline(__always)
    private mutating func countTrailerByte() throws(ChunkedDecodingError) {
        trailerSize &+= 1
        if trailerSize > limits.maxTrailerSize { throw .trailersTooLarge }
    }
}
