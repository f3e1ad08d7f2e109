/// Bounds-checked reads over the caller's bytes.
///
/// Every accessor returns `nil` instead of reading past the end, and offsets are validated with arithmetic
/// that cannot overflow, so a hostile length or offset can only ever produce a parse failure.
struct ImageHeaderBytes {
    let raw: UnsafeRawBufferPointer

    init(_ raw: UnsafeRawBufferPointer) {
        self.raw = raw
    }

    var count: Int { raw.count }

    /// Whether `length` bytes starting at `offset` lie inside the buffer; written so no sum can overflow.
    func contains(_ offset: Int, _ length: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= raw.count && length <= raw.count - offset
    }

    func u8(_ offset: Int) -> UInt8? {
        guard contains(offset, 1) else { return nil }
        return raw[offset]
    }

    func u16(_ offset: Int, bigEndian: Bool) -> UInt16? {
        guard contains(offset, 2) else { return nil }
        let a = UInt16(raw[offset]), b = UInt16(raw[offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    func u24(_ offset: Int, bigEndian: Bool) -> UInt32? {
        guard contains(offset, 3) else { return nil }
        let a = UInt32(raw[offset]), b = UInt32(raw[offset + 1]), c = UInt32(raw[offset + 2])
        return bigEndian ? a << 16 | b << 8 | c : c << 16 | b << 8 | a
    }

    func u32(_ offset: Int, bigEndian: Bool) -> UInt32? {
        guard contains(offset, 4) else { return nil }
        var value: UInt32 = 0
        for i in 0..<4 {
            let byte = UInt32(raw[offset + (bigEndian ? i : 3 - i)])
            value = value << 8 | byte
        }
        return value
    }

    func u64(_ offset: Int, bigEndian: Bool) -> UInt64? {
        guard contains(offset, 8) else { return nil }
        var value: UInt64 = 0
        for i in 0..<8 {
            let byte = UInt64(raw[offset + (bigEndian ? i : 7 - i)])
            value = value << 8 | byte
        }
        return value
    }

    /// Whether the bytes at `offset` equal `signature`; a signature running past the end does not match.
    func matches(_ signature: [UInt8], at offset: Int = 0) -> Bool {
        guard contains(offset, signature.count) else { return false }
        for (i, byte) in signature.enumerated() where raw[offset + i] != byte {
            return false
        }
        return true
    }

    /// Whether the buffer is a strict, non-empty prefix of `signature`: too short to decide, but not ruled out.
    func isStrictPrefix(of signature: [UInt8]) -> Bool {
        raw.count > 0 && raw.count < signature.count && matches(Array(signature.prefix(raw.count)))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Up to `length` bytes from `offset` as spaced hex, for reasons that show what was actually there.
    func hex(_ offset: Int, _ length: Int) -> String {
        guard offset >= 0, offset < raw.count, length > 0 else { return "" }
        let end = offset + min(length, raw.count - offset)
        // Built as bytes: the reason for every non-image put shows these, so this runs on most puts.
        let digits = ImageHeaderBytes.hexDigits
        var text: [UInt8] = []
        text.reserveCapacity(3 * (end - offset))
        for byte in raw[offset..<end] {
            if !text.isEmpty { text.append(UInt8(ascii: " ")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A four-character code as text when printable, else as hex, so reasons never embed control bytes.
    static func fourCC(_ code: UInt32) -> String {
        let scalars = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: code >> UInt32($0)) }
        if scalars.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return "'" + String(decoding: scalars, as: UTF8.self) + "'"
        }
        return "0x" + String(code, radix: 16)
    }

    /// The big-endian value of a four-character code, for comparing box and chunk types as integers.
    static func code(_ text: StaticString) -> UInt32 {
        precondition(text.utf8CodeUnitCount == 4, "a four-character code has four ASCII characters")
        var value: UInt32 = 0
        text.withUTF8Buffer { for byte in $0 { value = value << 8 | UInt32(byte) } }
        return value
    }
}

/// Checks a decoded size once, so every format rejects zero and oversize dimensions with the same wording.
func validatedImage(_ format: ImageFormat, _ name: String, width: UInt64, height: UInt64) throws(ImageParseFailure) -> ImageInfo {
    if width == 0 || height == 0 {
        throw ImageParseFailure(reason: "\(name) declares a zero dimension: \(width)×\(height)")
    }
    // Stored metadata keeps each dimension in 32 bits; anything larger is a hostile header, not an image.
    if width > UInt64(UInt32.max) || height > UInt64(UInt32.max) {
        throw ImageParseFailure(reason: "\(name) declares an impossible size: \(width)×\(height)")
    }
    return ImageInfo(format: format, width: Int(width), height: Int(height))
}
