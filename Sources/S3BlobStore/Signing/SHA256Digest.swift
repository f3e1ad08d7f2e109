/// A SHA-256 digest: 32 bytes, kept as the eight big-endian state words so that making one allocates nothing.
package struct SHA256Digest: Sendable, Hashable, CustomStringConvertible {
    /// The byte count of a digest.
    package static let byteCount = 32

    private var words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

    init(words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)) {
        // Stored big-endian, so the tuple's memory is the digest's bytes in order.
        self.words = (
            words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian,
            words.4.bigEndian, words.5.bigEndian, words.6.bigEndian, words.7.bigEndian
        )
    }

    /// Calls `body` with the 32 digest bytes.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var copy = words
        return try Swift.withUnsafeBytes(of: &copy, body)
    }

    /// The 32 digest bytes.
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The digest as 64 lowercase hexadecimal digits, the form Signature V4 writes everywhere.
    package var hex: String {
        withUnsafeBytes { digest in
            String(unsafeUninitializedCapacity: Self.byteCount * 2) { output in
                for (index, byte) in digest.enumerated() {
                    output[index * 2] = HexDigits.lowercase(byte >> 4)
                    output[index * 2 + 1] = HexDigits.lowercase(byte & 0x0f)
                }
                return Self.byteCount * 2
            }
        }
    }

    /// ``hex``.
    package var description: String { hex }

    package static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqual(right) } }
    }

    package func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// Hexadecimal digits for digests and percent-encoding.
enum HexDigits {
    /// The lowercase digit of a nibble (0...15).
    @inline(__always)
    static func lowercase(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x61 &+ nibble &- 10
    }

    /// The uppercase digit of a nibble (0...15), as percent-encoding wants (RFC 3986 §2.1).
    @inline(__always)
    static func uppercase(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x41 &+ nibble &- 10
    }
}
