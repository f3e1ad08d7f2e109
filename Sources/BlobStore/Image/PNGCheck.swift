/// PNG over the whole file: every chunk's length, type and CRC-32 up to IEND, IHDR's fields, and the chunk
/// order the PNG specification requires (IHDR first; PLTE where the colour type needs or allows it, before
/// IDAT; consecutive IDATs; IEND last, with nothing after it). The compressed pixels are not inflated.
final class PNGCheck: ImageStreamCheck {
    private enum State { case signature, header, data, crc, end }

    private static let ihdr = ImageHeaderBytes.code("IHDR")
    private static let plte = ImageHeaderBytes.code("PLTE")
    private static let idat = ImageHeaderBytes.code("IDAT")
    private static let iend = ImageHeaderBytes.code("IEND")
    private static let cgbi = ImageHeaderBytes.code("CgBI")
    /// PNG chunk lengths are at most 2^31-1 so decoders can use signed arithmetic.
    private static let maximumLength = UInt32(Int32.max)

    private var state = State.signature
    private var field = FieldBuffer()
    /// Offset of the first byte of the next `consume` call.
    private var position = 0
    private var chunkStart = 0
    private var chunkType: UInt32 = 0
    private var chunkLength = 0
    /// Data bytes of the current chunk not yet seen.
    private var remaining = 0
    private var crc = CRC32()
    private var chunks = 0
    private var colourType: UInt8?
    private var sawPalette = false
    private var sawData = false
    private var dataEnded = false
    private var info: ImageInfo?

    init() { field.expect(8) }

    var format: ImageFormat? { .png }

    private var typeName: String { ImageHeaderBytes.fourCC(chunkType) }

    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure) {
        var index = 0
        defer { position += input.count }
        while index < input.count {
            switch state {
            case .signature:
                // The validator matched the signature before choosing this check.
                if field.fill(input, &index) { state = .header; field.expect(8) }
            case .header:
                if field.fill(input, &index) { try beginChunk(at: position + index - 8) }
            case .data:
                if chunkType == Self.ihdr {
                    guard field.fill(input, &index) else { continue }
                    crc.update(field.bytes)
                    try checkHeader()
                } else {
                    let take = min(remaining, input.count - index)
                    crc.update(UnsafeRawBufferPointer(rebasing: input[index..<index + take]))
                    remaining -= take
                    index += take
                    guard remaining == 0 else { continue }
                }
                state = .crc
                field.expect(4)
            case .crc:
                if field.fill(input, &index) { try endChunk() }
            case .end:
                throw ImageParseFailure(reason: "PNG has data after its IEND chunk, at offset \(position + index)")
            }
        }
    }

    private func beginChunk(at offset: Int) throws(ImageParseFailure) {
        let length = field.be32(0)
        chunkType = field.be32(4)
        chunkStart = offset
        guard field.bytes[4..<8].allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
            throw ImageParseFailure(reason: "PNG chunk at offset \(offset) has type \(typeName), not four letters")
        }
        guard length <= Self.maximumLength else {
            throw ImageParseFailure(reason: "PNG chunk \(typeName) at offset \(offset) has length \(length), beyond the 2^31-1 limit")
        }
        chunkLength = Int(length)
        defer { chunks += 1 }
        let type = chunkType
        if info == nil {
            // Apple's "crushed" PNGs put a CgBI chunk before IHDR.
            if chunks == 0 && type == Self.cgbi {
                return startData()
            }
            guard type == Self.ihdr else {
                throw ImageParseFailure(reason: "PNG first chunk is \(typeName), not 'IHDR'")
            }
            guard length == 13 else {
                throw ImageParseFailure(reason: "PNG IHDR chunk length is \(length), not 13")
            }
            return startData()
        }
        if sawData && type != Self.idat { dataEnded = true }
        switch type {
        case Self.ihdr, Self.cgbi:
            throw ImageParseFailure(reason: "PNG has a second \(typeName) chunk at offset \(offset)")
        case Self.plte:
            if sawPalette { throw ImageParseFailure(reason: "PNG has a second PLTE chunk at offset \(offset)") }
            if sawData { throw ImageParseFailure(reason: "PNG PLTE chunk at offset \(offset) comes after IDAT") }
            if colourType == 0 || colourType == 4 {
                throw ImageParseFailure(reason: "PNG colour type \(colourType ?? 0) (greyscale) forbids a PLTE chunk")
            }
            guard length % 3 == 0, (3...768).contains(length) else {
                throw ImageParseFailure(reason: "PNG PLTE chunk length is \(length), not a multiple of 3 between 3 and 768")
            }
            sawPalette = true
        case Self.idat:
            if dataEnded {
                throw ImageParseFailure(reason: "PNG IDAT chunk at offset \(offset) does not follow the previous IDAT (IDAT chunks must be consecutive)")
            }
            if colourType == 3 && !sawPalette {
                throw ImageParseFailure(reason: "PNG colour type 3 (palette) has no PLTE chunk before IDAT")
            }
            sawData = true
        case Self.iend:
            guard sawData else { throw ImageParseFailure(reason: "PNG reaches IEND at offset \(offset) without an IDAT chunk") }
            guard length == 0 else { throw ImageParseFailure(reason: "PNG IEND chunk length is \(length), not 0") }
        default:
            // Bit 5 of the first letter clear (upper case) marks a chunk a decoder must understand.
            if field[4] & 0x20 == 0 {
                throw ImageParseFailure(reason: "PNG has an unknown critical chunk \(typeName) at offset \(offset)")
            }
        }
        startData()
    }

    private func startData() {
        crc = CRC32()
        crc.update(Array(field.bytes[4..<8]))
        remaining = chunkLength
        if chunkLength == 0 {
            state = .crc
            field.expect(4)
        } else {
            state = .data
            if chunkType == Self.ihdr { field.expect(13) }
        }
    }

    /// IHDR's fields; the PNG specification lists the allowed bit depths for each colour type.
    private func checkHeader() throws(ImageParseFailure) {
        let width = field.be32(0), height = field.be32(4)
        let depth = field[8], colour = field[9]
        guard width <= Self.maximumLength, height <= Self.maximumLength else {
            throw ImageParseFailure(reason: "PNG declares \(width)×\(height), beyond the 2^31-1 limit")
        }
        let depths: [UInt8]
        switch colour {
        case 0: depths = [1, 2, 4, 8, 16]
        case 3: depths = [1, 2, 4, 8]
        case 2, 4, 6: depths = [8, 16]
        default: throw ImageParseFailure(reason: "PNG colour type \(colour) is not 0, 2, 3, 4 or 6")
        }
        guard depths.contains(depth) else {
            throw ImageParseFailure(
                reason: "PNG bit depth \(depth) is not allowed for colour type \(colour) (allowed: \(depths.map(String.init).joined(separator: ", ")))"
            )
        }
        guard field[10] == 0 else { throw ImageParseFailure(reason: "PNG compression method \(field[10]) is not 0") }
        guard field[11] == 0 else { throw ImageParseFailure(reason: "PNG filter method \(field[11]) is not 0") }
        guard field[12] <= 1 else { throw ImageParseFailure(reason: "PNG interlace method \(field[12]) is not 0 or 1") }
        info = try validatedImage(.png, "PNG", width: UInt64(width), height: UInt64(height))
        colourType = colour
    }

    private func endChunk() throws(ImageParseFailure) {
        let stored = field.be32(0)
        guard stored == crc.value else {
            throw ImageParseFailure(
                reason: "PNG chunk \(typeName) at offset \(chunkStart) has CRC \(hex32(stored)), but its bytes give \(hex32(crc.value))"
            )
        }
        if chunkType == Self.iend {
            state = .end
        } else {
            state = .header
            field.expect(8)
        }
    }

    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo {
        switch state {
        case .end:
            guard let info else { throw ImageParseFailure(reason: "PNG has no IHDR chunk") }
            return info
        case .signature, .header:
            if field.isEmpty {
                throw ImageParseFailure(reason: "PNG ends after \(size) bytes without an IEND chunk")
            }
            throw ImageParseFailure.truncated("PNG", "chunk header at offset \(size - field.bytes.count)", have: field.bytes.count, need: 8)
        case .data:
            throw ImageParseFailure(
                reason: "PNG ends inside chunk \(typeName) at offset \(chunkStart): it declares \(chunkLength) data bytes, the file holds \(size - chunkStart - 8)"
            )
        case .crc:
            throw ImageParseFailure(reason: "PNG ends inside the CRC of chunk \(typeName) at offset \(chunkStart)")
        }
    }
}

/// Eight hex digits, as CRCs are usually shown.
func hex32(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}
