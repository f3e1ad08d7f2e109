/// WebP over the whole file: the RIFF size equals the file's, every chunk (and its padding byte) lies
/// inside the container, and the image chunks' headers are checked as libwebp checks them: a VP8 key
/// frame's tag, start code, partition size and dimensions; a VP8L signature, version and dimensions; VP8X
/// flags and canvas, with a still image's VP8/VP8L matching the canvas, or ANIM plus ANMF frames (each
/// inside the canvas, holding one image of the frame's size); ALPH headers. The bitstreams are not decoded.
final class WebPCheck: ImageStreamCheck {
    private enum State { case riff, chunkHeader, chunkPrefix, skip, end }

    private static let vp8 = ImageHeaderBytes.code("VP8 ")
    private static let vp8l = ImageHeaderBytes.code("VP8L")
    private static let vp8x = ImageHeaderBytes.code("VP8X")
    private static let alph = ImageHeaderBytes.code("ALPH")
    private static let anim = ImageHeaderBytes.code("ANIM")
    private static let anmf = ImageHeaderBytes.code("ANMF")

    private var state = State.riff
    private var field = FieldBuffer()
    private var position = 0
    /// Where the RIFF container ends, as its size field says.
    private var riffEnd = 0
    private var chunkType: UInt32 = 0
    private var chunkStart = 0
    private var chunkSize = 0
    /// Bytes of the current chunk (and padding) still to skip after its checked prefix.
    private var remaining = 0
    private var chunks = 0

    /// The VP8X canvas and flags; nil for a simple-format file.
    private var canvas: (width: UInt64, height: UInt64)?
    private var animated = false
    private var sawAnimation = false
    private var frames = 0
    /// The still image (simple format, or VP8X without animation).
    private var sawImage = false
    private var sawAlpha = false
    /// The open ANMF frame: where its sub-chunks end, its size, whether it has its image yet.
    private var frameEnd: Int?
    private var frameSize: (width: UInt64, height: UInt64) = (0, 0)
    private var frameHasImage = false
    private var info: ImageInfo?

    init() { field.expect(12) }

    var format: ImageFormat? { .webp }

    private var typeName: String { ImageHeaderBytes.fourCC(chunkType) }

    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure) {
        var index = 0
        defer { position += input.count }
        while index < input.count {
            switch state {
            case .riff:
                guard field.fill(input, &index) else { continue }
                let size = field.le32(4)
                guard size >= 4 + 8 else {
                    throw ImageParseFailure(reason: "WebP RIFF size \(size) is too small for the form type and one chunk")
                }
                riffEnd = 8 + Int(size)
                state = .chunkHeader
                field.expect(8)
            case .chunkHeader:
                if field.fill(input, &index) { try beginChunk(at: position + index - 8) }
            case .chunkPrefix:
                if field.fill(input, &index) { try checkPrefix() }
            case .skip:
                let take = min(remaining, input.count - index)
                remaining -= take
                index += take
                if remaining == 0 { try endChunk() }
            case .end:
                throw ImageParseFailure(reason: "WebP has data after its RIFF container (which ends at offset \(riffEnd))")
            }
        }
    }

    private func beginChunk(at offset: Int) throws(ImageParseFailure) {
        chunkType = field.be32(0)
        chunkStart = offset
        let size = field.le32(4)
        chunkSize = Int(size)
        let limit = frameEnd ?? riffEnd
        // Chunks are padded to an even size; the padding byte belongs to the chunk.
        let end = UInt64(offset) + 8 + UInt64(size) + UInt64(size & 1)
        guard end <= UInt64(limit) else {
            throw ImageParseFailure(
                reason: "WebP chunk \(typeName) at offset \(offset) with size \(size) overruns its \(frameEnd == nil ? "RIFF container" : "ANMF frame"), which ends at offset \(limit)"
            )
        }
        remaining = chunkSize + chunkSize & 1
        chunks += 1
        let prefix: Int
        switch chunkType {
        case Self.vp8: prefix = 10
        case Self.vp8l: prefix = 5
        case Self.vp8x: prefix = 10
        case Self.alph: prefix = 1
        case Self.anim: prefix = 6
        case Self.anmf: prefix = 16
        default: prefix = 0
        }
        if chunks == 1 && ![Self.vp8, Self.vp8l, Self.vp8x].contains(chunkType) {
            throw ImageParseFailure(reason: "WebP first chunk is \(typeName), not 'VP8 ', 'VP8L' or 'VP8X'")
        }
        guard chunkSize >= prefix else {
            throw ImageParseFailure(reason: "WebP \(typeName) chunk at offset \(offset) is \(chunkSize) bytes, too small for its \(prefix)-byte header")
        }
        field.expect(prefix)
        if prefix > 0 {
            state = .chunkPrefix
        } else {
            try checkPrefix()
        }
    }

    /// Checks a chunk's header fields, then skips the rest of it (ANMF: opens its frame).
    private func checkPrefix() throws(ImageParseFailure) {
        let offset = chunkStart
        let chunkBody = field.bytes.count
        switch chunkType {
        case Self.vp8x:
            guard chunks == 1 else { throw misplaced("only come first") }
            animated = field[0] & 0x02 != 0
            let width = UInt64(field.le24(4)) + 1, height = UInt64(field.le24(7)) + 1
            // The specification caps the canvas area at 2^32-1 pixels.
            guard width * height <= UInt64(UInt32.max) else {
                throw ImageParseFailure(reason: "WebP VP8X canvas \(width)×\(height) exceeds 2^32-1 pixels")
            }
            canvas = (width, height)
            info = try validatedImage(.webp, "WebP VP8X", width: width, height: height)
        case Self.vp8, Self.vp8l:
            let size = try imageSize()
            if frameEnd != nil {
                guard !frameHasImage else { throw misplaced("appear once per ANMF frame") }
                guard size == frameSize else {
                    throw ImageParseFailure(reason: "WebP frame image at offset \(offset) is \(size.width)×\(size.height), but its ANMF frame is \(frameSize.width)×\(frameSize.height)")
                }
                frameHasImage = true
            } else if let canvas {
                guard !animated else { throw misplaced("be inside ANMF frames in an animated file") }
                guard !sawImage else { throw misplaced("appear once") }
                guard size == canvas else {
                    throw ImageParseFailure(reason: "WebP image at offset \(offset) is \(size.width)×\(size.height), but the VP8X canvas is \(canvas.width)×\(canvas.height)")
                }
                sawImage = true
            } else {
                guard chunks == 1 else { throw misplaced("appear once") }
                sawImage = true
                info = try validatedImage(.webp, chunkType == Self.vp8 ? "WebP VP8" : "WebP VP8L", width: size.width, height: size.height)
            }
        case Self.alph:
            guard canvas != nil, frameEnd != nil ? !frameHasImage : !sawImage && !animated else {
                throw misplaced("come before its image in an extended file")
            }
            let header = field[0]
            guard header & 0x03 <= 1, header >> 4 & 0x03 <= 1, header >> 6 == 0 else {
                throw ImageParseFailure(reason: "WebP ALPH chunk at offset \(offset) has header byte \(hexByte(header)): unknown compression, preprocessing or reserved bits")
            }
            sawAlpha = true
        case Self.anim:
            guard animated, frameEnd == nil, !sawAnimation, frames == 0 else { throw misplaced("appear once, before the frames, in a file flagged as animated") }
            sawAnimation = true
        case Self.anmf:
            guard animated, sawAnimation, frameEnd == nil, let canvas else {
                throw misplaced("follow ANIM in a file flagged as animated")
            }
            let x = UInt64(field.le24(0)) * 2, y = UInt64(field.le24(3)) * 2
            let width = UInt64(field.le24(6)) + 1, height = UInt64(field.le24(9)) + 1
            guard x + width <= canvas.width, y + height <= canvas.height else {
                throw ImageParseFailure(reason: "WebP ANMF frame at offset \(offset) (\(width)×\(height) at \(x),\(y)) lies outside the \(canvas.width)×\(canvas.height) canvas")
            }
            frames += 1
            frameSize = (width, height)
            frameHasImage = false
            frameEnd = offset + 8 + chunkSize
            return try boundary(at: offset + 8 + 16)
        default:
            if frameEnd == nil && canvas == nil {
                throw misplaced("not follow the image in a simple-format file (only VP8X files have more chunks)")
            }
        }
        remaining -= chunkBody
        if remaining == 0 {
            try endChunk()
        } else {
            state = .skip
        }
    }

    private func misplaced(_ rule: String) -> ImageParseFailure {
        ImageParseFailure(reason: "WebP chunk \(typeName) at offset \(chunkStart) is misplaced: it must \(rule)")
    }

    /// The dimensions in a VP8 or VP8L header, checked as libwebp's VP8GetInfo and VP8LGetInfo do.
    private func imageSize() throws(ImageParseFailure) -> (width: UInt64, height: UInt64) {
        if chunkType == Self.vp8 {
            let tag = UInt32(field[0]) | UInt32(field[1]) << 8 | UInt32(field[2]) << 16
            guard tag & 1 == 0 else { throw ImageParseFailure(reason: "WebP VP8 frame is not a key frame") }
            guard tag >> 1 & 7 <= 3 else { throw ImageParseFailure(reason: "WebP VP8 frame has unknown profile \(tag >> 1 & 7)") }
            guard tag >> 4 & 1 == 1 else { throw ImageParseFailure(reason: "WebP VP8 frame is not shown") }
            guard Int(tag >> 5) < chunkSize else {
                throw ImageParseFailure(reason: "WebP VP8 first partition of \(tag >> 5) bytes does not fit its \(chunkSize)-byte chunk")
            }
            guard field[3] == 0x9D, field[4] == 0x01, field[5] == 0x2A else {
                throw ImageParseFailure(reason: "WebP VP8 start code is \(hexByte(field[3])) \(hexByte(field[4])) \(hexByte(field[5])), not 9d 01 2a")
            }
            let width = UInt64(field.le16(6) & 0x3FFF), height = UInt64(field.le16(8) & 0x3FFF)
            _ = try validatedImage(.webp, "WebP VP8", width: width, height: height)
            return (width, height)
        }
        guard field[0] == 0x2F else {
            throw ImageParseFailure(reason: "WebP VP8L signature byte is \(hexByte(field[0])), not 2f")
        }
        let packed = field.le32(1)
        guard packed >> 29 == 0 else { throw ImageParseFailure(reason: "WebP VP8L version is \(packed >> 29), not 0") }
        return (UInt64(packed & 0x3FFF) + 1, UInt64(packed >> 14 & 0x3FFF) + 1)
    }

    private func endChunk() throws(ImageParseFailure) {
        try boundary(at: chunkStart + 8 + chunkSize + chunkSize & 1)
    }

    /// The next chunk would start at `offset`: closes the ANMF frame or the container that ends there.
    private func boundary(at offset: Int) throws(ImageParseFailure) {
        state = .chunkHeader
        field.expect(8)
        if let end = frameEnd, offset == end {
            guard frameHasImage else {
                throw ImageParseFailure(reason: "WebP ANMF frame ending at offset \(end) has no VP8 or VP8L image")
            }
            frameEnd = nil
        }
        if frameEnd == nil && offset == riffEnd { state = .end }
    }

    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo {
        guard state == .end else {
            if state == .riff {
                throw ImageParseFailure.truncated("WebP", "RIFF header", have: size, need: 12)
            }
            throw ImageParseFailure(reason: "WebP ends after \(size) bytes, inside its RIFF container of \(riffEnd) bytes")
        }
        if animated {
            guard frames > 0 else { throw ImageParseFailure(reason: "WebP is flagged as animated but has no ANMF frame") }
        } else if !sawImage {
            throw ImageParseFailure(reason: "WebP has no VP8 or VP8L image chunk")
        }
        return info!
    }
}
