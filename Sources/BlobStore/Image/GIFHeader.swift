/// GIF: "GIF87a" or "GIF89a", then the logical screen's little-endian width and height.
///
/// The logical screen is what viewers size the image to; individual frames may be smaller.
enum GIFHeader {
    static let signatures: [[UInt8]] = [Array("GIF87a".utf8), Array("GIF89a".utf8)]

    static func parse(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        guard let width = bytes.u16(6, bigEndian: false), let height = bytes.u16(8, bigEndian: false) else {
            throw .truncated("GIF", "logical screen descriptor", have: bytes.count, need: 10)
        }
        return try validatedImage(.gif, "GIF", width: UInt64(width), height: UInt64(height))
    }
}
