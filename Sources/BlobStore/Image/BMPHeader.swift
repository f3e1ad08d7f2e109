/// BMP: a 14-byte file header, then a DIB header whose size field says which layout follows.
enum BMPHeader {
    static let signature: [UInt8] = [0x42, 0x4D] // "BM"

    static func parse(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        guard let headerSize = bytes.u32(14, bigEndian: false) else {
            throw .truncated("BMP", "file header", have: bytes.count, need: 18)
        }
        switch headerSize {
        case 12:
            // BITMAPCOREHEADER (Windows 2 / OS/2 1.x): unsigned 16-bit fields, always bottom-up.
            guard let width = bytes.u16(18, bigEndian: false), let height = bytes.u16(20, bigEndian: false) else {
                throw .truncated("BMP", "BITMAPCOREHEADER", have: bytes.count, need: 22)
            }
            return try validatedImage(.bmp, "BMP", width: UInt64(width), height: UInt64(height))
        case 16, 40, 52, 56, 64, 108, 124:
            // BITMAPINFOHEADER and its successors (and OS/2 2.x, which shares the layout): signed 32-bit fields.
            guard let rawWidth = bytes.u32(18, bigEndian: false), let rawHeight = bytes.u32(22, bigEndian: false) else {
                throw .truncated("BMP", "BITMAPINFOHEADER", have: bytes.count, need: 26)
            }
            let width = Int32(bitPattern: rawWidth), height = Int32(bitPattern: rawHeight)
            guard width >= 0 else {
                throw ImageParseFailure(reason: "BMP declares a negative width \(width)")
            }
            // A negative height marks a top-down bitmap; the magnitude is still the height.
            return try validatedImage(.bmp, "BMP", width: UInt64(width), height: UInt64(height.magnitude))
        default:
            // "BM" is only two bytes, so text can start with it; without a known DIB header it is not a BMP.
            throw ImageParseFailure(
                reason: "no known image signature (begins with 'BM', but BMP DIB header size \(headerSize) is not one of 12, 16, 40, 52, 56, 64, 108 or 124)"
            )
        }
    }
}
