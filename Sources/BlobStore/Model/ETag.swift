/// A blob version's entity tag: the XXH64 checksum of its content, as 16 lowercase hex digits.
///
/// Equal content gives equal ETags, so a compare-and-swap succeeds when the content the
/// writer last saw is still what is stored.
public struct ETag: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 16 hex digits.
    public let rawValue: String

    /// Wraps an ETag as written by ``description`` (16 hex digits, optionally in double quotes).
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        guard text.utf8.count == 16, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        rawValue = String(text)
    }

    /// The ETag of content whose XXH64 is `checksum`.
    public init(checksum: UInt64) {
        // Written digit by digit into the string's own storage (16 bytes fit a small string, no
        // allocation): every GET builds one, and `String(_:radix:)` plus padding cost far more.
        rawValue = String(unsafeUninitializedCapacity: 16) { digits in
            let hex: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                digits[index] = hex.utf8Start[Int((checksum >> UInt64(60 - 4 * index)) & 0xF)]
            }
            return 16
        }
    }

    /// The checksum this ETag stands for.
    public var checksum: UInt64 { UInt64(rawValue, radix: 16) ?? 0 }

    /// The 16 hex digits.
    public var description: String { rawValue }

    /// The ETag of `bytes`.
    public static func of(_ bytes: UnsafeRawBufferPointer) -> ETag { ETag(checksum: XXH64.hash(bytes)) }

    /// Encodes as the bare hex string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Decodes from a hex string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let tag = ETag(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ETag: \(text)")
        }
        self = tag
    }
}
