/// PNG: the eight-byte signature, then an IHDR chunk whose first fields are the big-endian width and height.
enum PNGHeader {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let ihdr = ImageHeaderBytes.code("IHDR")
    private static let cgbi = ImageHeaderBytes.code("CgBI")

    static func parse(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        var chunk = 8
        // Apple's "crushed" PNGs put a CgBI chunk before IHDR; skipping it costs little and accepts iOS exports.
        if bytes.u32(chunk + 4, bigEndian: true) == cgbi, let length = bytes.u32(chunk, bigEndian: true) {
            guard length <= 64 else {
                throw ImageParseFailure(reason: "PNG CgBI chunk length \(length) is implausible")
            }
            chunk += 12 + Int(length)
        }
        let need = chunk + 16
        guard bytes.count >= need, let length = bytes.u32(chunk, bigEndian: true),
              let type = bytes.u32(chunk + 4, bigEndian: true),
              let width = bytes.u32(chunk + 8, bigEndian: true),
              let height = bytes.u32(chunk + 12, bigEndian: true)
        else {
            throw .truncated("PNG", "header", have: bytes.count, need: need)
        }
        guard type == ihdr else {
            throw ImageParseFailure(reason: "PNG first chunk is \(ImageHeaderBytes.fourCC(type)), not 'IHDR'")
        }
        guard length == 13 else {
            throw ImageParseFailure(reason: "PNG IHDR chunk length is \(length), not 13")
        }
        // The PNG spec caps each dimension at 2^31-1 so decoders can use signed arithmetic.
        guard width <= UInt32(Int32.max), height <= UInt32(Int32.max) else {
            throw ImageParseFailure(reason: "PNG declares \(width)×\(height), beyond the 2^31-1 limit")
        }
        return try validatedImage(.png, "PNG", width: UInt64(width), height: UInt64(height))
    }
}
