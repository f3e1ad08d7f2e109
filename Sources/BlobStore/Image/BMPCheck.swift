/// BMP over the whole file: the file and DIB headers' fields (planes, bit count, compression and their
/// combinations), and the pixel array inside the file: at least 14 + DIB header bytes from the start, and
/// its size (rows padded to 4 bytes times the height, or the compressed size the header declares) within
/// the file. A negative height (top-down rows) is allowed for uncompressed bitmaps only. Bytes after the
/// pixel array are allowed, as is a wrong file size in the file header, which many writers leave at zero.
final class BMPCheck: ImageStreamCheck {
    private var field = FieldBuffer()
    /// Offset and length of the pixel array, once the headers are in.
    private var pixels: (offset: UInt64, count: UInt64)?
    private var info: ImageInfo?

    init() { field.expect(18) }

    var format: ImageFormat? { .bmp }

    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure) {
        var index = 0
        guard info == nil, field.fill(input, &index) else { return }
        if field.bytes.count == 18 {
            let headerSize = field.le32(14)
            guard [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize) else {
                // The header parser words this case ("BM" text is not a bitmap).
                guard case .failure(let failure) = ImageHeaderParser.parse(field.bytes) else { return }
                throw failure
            }
            field.expectMore(Int(headerSize) - 4)
            guard field.fill(input, &index) else { return }
        }
        try checkHeaders()
    }

    private func checkHeaders() throws(ImageParseFailure) {
        let headerSize = Int(field.le32(14))
        let dataOffset = UInt64(field.le32(10))
        guard dataOffset >= UInt64(14 + headerSize) else {
            throw ImageParseFailure(reason: "BMP pixel data offset \(dataOffset) lies inside the \(14 + headerSize)-byte headers")
        }
        let width: UInt64, height: UInt64, planes: UInt16, bits: UInt16
        var compression: UInt32 = 0
        var declaredSize: UInt64 = 0
        var topDown = false
        if headerSize == 12 {
            // BITMAPCOREHEADER: unsigned 16-bit fields, always bottom-up.
            width = UInt64(field.le16(18))
            height = UInt64(field.le16(20))
            planes = field.le16(22)
            bits = field.le16(24)
        } else {
            let signedWidth = Int32(bitPattern: field.le32(18)), signedHeight = Int32(bitPattern: field.le32(22))
            guard signedWidth >= 0 else {
                throw ImageParseFailure(reason: "BMP declares a negative width \(signedWidth)")
            }
            width = UInt64(signedWidth)
            height = UInt64(signedHeight.magnitude)
            topDown = signedHeight < 0
            planes = field.le16(26)
            bits = field.le16(28)
            if headerSize >= 40 {
                compression = field.le32(30)
                declaredSize = UInt64(field.le32(34))
            }
        }
        let image = try validatedImage(.bmp, "BMP", width: width, height: height)
        guard planes == 1 else { throw ImageParseFailure(reason: "BMP declares \(planes) colour planes, not 1") }
        let uncompressed: Bool, known: Bool
        if headerSize == 12 || headerSize == 16 || headerSize == 64 {
            // Core and OS/2 2.x headers: 1, 4, 8 or 24 bits; OS/2 numbers its compressions 0–4 (RLE8, RLE4, Huffman, RLE24).
            uncompressed = compression == 0
            known = compression <= 4 && [1, 4, 8, 24].contains(bits)
        } else {
            switch compression {
            case 0: (uncompressed, known) = (true, [1, 2, 4, 8, 16, 24, 32, 64].contains(bits))
            case 1: (uncompressed, known) = (false, bits == 8)  // RLE8
            case 2: (uncompressed, known) = (false, bits == 4)  // RLE4
            case 3, 6: (uncompressed, known) = (true, bits == 16 || bits == 32)  // BITFIELDS, ALPHABITFIELDS
            case 4, 5: (uncompressed, known) = (false, true)  // an embedded JPEG or PNG
            default: (uncompressed, known) = (false, false)
            }
        }
        guard known else {
            throw ImageParseFailure(reason: "BMP bit count \(bits) with compression \(compression) is not a known combination")
        }
        if topDown && !uncompressed {
            throw ImageParseFailure(reason: "BMP is top-down (negative height) but compressed (compression \(compression)), which the format forbids")
        }
        let count: UInt64
        if uncompressed {
            // Rows are padded to whole 32-bit words.
            let (rowBits, overflow) = width.multipliedReportingOverflow(by: UInt64(bits))
            let row = (rowBits + 31) / 32 * 4
            let (total, overflow2) = row.multipliedReportingOverflow(by: height)
            guard !overflow, !overflow2 else {
                throw ImageParseFailure(reason: "BMP pixel array of \(width)×\(height) at \(bits) bits is larger than any file")
            }
            count = total
        } else {
            guard declaredSize > 0 else {
                throw ImageParseFailure(reason: "BMP compressed pixel data (compression \(compression)) declares a size of 0")
            }
            count = declaredSize
        }
        pixels = (dataOffset, count)
        info = image
    }

    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo {
        guard let info, let pixels else {
            if field.bytes.count < 18 {
                throw ImageParseFailure.truncated("BMP", "file header", have: size, need: 18)
            }
            throw ImageParseFailure.truncated("BMP", "DIB header", have: size, need: 14 + Int(field.le32(14)))
        }
        guard pixels.offset <= UInt64(size), pixels.count <= UInt64(size) - pixels.offset else {
            throw ImageParseFailure(
                reason: "BMP pixel array (\(pixels.count) bytes at offset \(pixels.offset)) runs past the end of the \(size)-byte file"
            )
        }
        return info
    }
}
