/// The pieces the protocol's JSON documents are written from, by hand, so that their field names
/// and order are exactly what docs/PROTOCOL.md says (no encoder configuration can change them).
package enum JSONText {
    /// Appends `text` as a JSON string literal: `"`, `\` and control characters (U+0000–U+001F,
    /// U+007F) escaped, everything else as its UTF-8.
    ///
    /// Works on the UTF-8 bytes and copies runs that need no escape in one go: every PUT response
    /// and every change event goes through here.
    package static func appendString(_ text: String, into out: inout [UInt8]) {
        out.append(0x22)
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for index in bytes.indices {
                let byte = bytes[index]
                // Multi-byte sequences (all bytes ≥ 0x80) pass through: a String is valid UTF-8.
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: out.append(contentsOf: [0x5C, 0x72])
                case 0x09: out.append(contentsOf: [0x5C, 0x74])
                default: out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hexDigit(byte >> 4), hexDigit(byte & 0xF)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(0x22)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10 }

    /// Appends a `"key":` prefix.
    package static func appendKey(_ key: String, into out: inout [UInt8]) {
        appendString(key, into: &out)
        out.append(0x3A)
    }

    /// Appends a constant piece of JSON as it is.
    package static func appendRaw(_ piece: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: piece.utf8Start, count: piece.utf8CodeUnitCount))
    }
}
