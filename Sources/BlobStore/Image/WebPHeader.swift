/// WebP: a RIFF container of form type "WEBP" whose first chunk is VP8, VP8L or VP8X.
enum WebPHeader {
    static let riff = Array("RIFF".utf8)
    static let webp = Array("WEBP".utf8)
    private static let vp8 = ImageHeaderBytes.code("VP8 ")
    private static let vp8l = ImageHeaderBytes.code("VP8L")
    private static let vp8x = ImageHeaderBytes.code("VP8X")

    static func parse(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        guard let chunk = bytes.u32(12, bigEndian: true) else {
            throw .truncated("WebP", "first chunk header", have: bytes.count, need: 16)
        }
        switch chunk {
        case vp8:
            // Lossy: a 3-byte frame tag, the start code 9d 01 2a, then 14-bit dimensions (top 2 bits are scaling).
            guard let tag = bytes.u8(20), let width = bytes.u16(26, bigEndian: false),
                  let height = bytes.u16(28, bigEndian: false)
            else {
                throw .truncated("WebP", "VP8 frame header", have: bytes.count, need: 30)
            }
            guard tag & 1 == 0 else {
                throw ImageParseFailure(reason: "WebP VP8 frame is not a key frame")
            }
            guard bytes.matches([0x9D, 0x01, 0x2A], at: 23) else {
                throw ImageParseFailure(reason: "WebP VP8 start code is \(bytes.hex(23, 3)), not 9d 01 2a")
            }
            return try validatedImage(.webp, "WebP VP8", width: UInt64(width & 0x3FFF), height: UInt64(height & 0x3FFF))
        case vp8l:
            // Lossless: signature byte 0x2f, then 14 bits of width-1 and 14 bits of height-1, little-endian.
            guard let signature = bytes.u8(20), let packed = bytes.u32(21, bigEndian: false) else {
                throw .truncated("WebP", "VP8L header", have: bytes.count, need: 25)
            }
            guard signature == 0x2F else {
                throw ImageParseFailure(reason: "WebP VP8L signature byte is \(bytes.hex(20, 1)), not 2f")
            }
            let width = UInt64(packed & 0x3FFF) + 1, height = UInt64(packed >> 14 & 0x3FFF) + 1
            return try validatedImage(.webp, "WebP VP8L", width: width, height: height)
        case vp8x:
            // Extended: flags and reserved bytes, then 24-bit canvas width-1 and height-1, little-endian.
            guard let width = bytes.u24(24, bigEndian: false), let height = bytes.u24(27, bigEndian: false) else {
                throw .truncated("WebP", "VP8X header", have: bytes.count, need: 30)
            }
            return try validatedImage(.webp, "WebP VP8X", width: UInt64(width) + 1, height: UInt64(height) + 1)
        default:
            throw ImageParseFailure(
                reason: "WebP first chunk is \(ImageHeaderBytes.fourCC(chunk)), not 'VP8 ', 'VP8L' or 'VP8X'"
            )
        }
    }
}
