/// GIF over the whole file: the logical screen descriptor and colour tables by their declared sizes, then
/// every block (image descriptors with their LZW data, extensions) and every data sub-block, up to the
/// trailer byte 0x3B, with nothing after it. The LZW data is not decompressed.
final class GIFCheck: ImageStreamCheck {
    private enum State {
        case screen, skip, block, imageDescriptor, codeSize, extensionLabel, subBlockSize, end
    }

    private var state = State.screen
    /// What follows a skipped run: the block after a colour table, the next size after a sub-block's data.
    private var afterSkip = State.block
    private var field = FieldBuffer()
    private var position = 0
    private var remaining = 0
    private var images = 0
    private var blockOffset = 0
    private var info: ImageInfo?

    init() { field.expect(13) }

    var format: ImageFormat? { .gif }

    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure) {
        var index = 0
        defer { position += input.count }
        while index < input.count {
            switch state {
            case .screen:
                guard field.fill(input, &index) else { continue }
                info = try validatedImage(.gif, "GIF", width: UInt64(field.le16(6)), height: UInt64(field.le16(8)))
                skipColourTable(flags: field[10], then: .block)
            case .skip:
                let take = min(remaining, input.count - index)
                remaining -= take
                index += take
                if remaining == 0 { state = afterSkip }
            case .block:
                let byte = input[index]
                blockOffset = position + index
                index += 1
                switch byte {
                case 0x2C:
                    state = .imageDescriptor
                    field.expect(9)
                case 0x21:
                    state = .extensionLabel
                case 0x3B:
                    guard images > 0 else {
                        throw ImageParseFailure(reason: "GIF reaches its trailer at offset \(blockOffset) without an image")
                    }
                    state = .end
                default:
                    throw ImageParseFailure(
                        reason: "GIF has byte \(hexByte(byte)) at offset \(blockOffset) where a block (2c image, 21 extension, 3b trailer) must start"
                    )
                }
            case .imageDescriptor:
                guard field.fill(input, &index) else { continue }
                images += 1
                skipColourTable(flags: field[8], then: .codeSize)
            case .codeSize:
                let size = input[index]
                index += 1
                // Codes grow to at most 12 bits and start one bit wider than this.
                guard (1...11).contains(size) else {
                    throw ImageParseFailure(reason: "GIF image at offset \(blockOffset) has LZW minimum code size \(size), not 1–11")
                }
                state = .subBlockSize
            case .extensionLabel:
                index += 1
                state = .subBlockSize
            case .subBlockSize:
                let size = Int(input[index])
                index += 1
                if size == 0 {
                    state = .block
                } else {
                    remaining = size
                    afterSkip = .subBlockSize
                    state = .skip
                }
            case .end:
                throw ImageParseFailure(reason: "GIF has data after its trailer, at offset \(position + index)")
            }
        }
    }

    private func skipColourTable(flags: UInt8, then next: State) {
        if flags & 0x80 != 0 {
            remaining = 3 << (Int(flags & 0x07) + 1)
            afterSkip = next
            state = .skip
        } else {
            state = next
        }
    }

    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo {
        switch state {
        case .end:
            return info!
        case .screen:
            throw ImageParseFailure.truncated("GIF", "logical screen descriptor", have: size, need: 13)
        case .block:
            throw ImageParseFailure(reason: "GIF ends after \(size) bytes without its trailer (3b)")
        default:
            throw ImageParseFailure(reason: "GIF ends after \(size) bytes inside the block at offset \(blockOffset), without its trailer (3b)")
        }
    }
}
