/// Maps identifiers to file names inside a bucket folder, and back.
///
/// The name is the identifier with `/`, `%`, `~` and a leading `.` percent-escaped, so a name is
/// always one path component that is never `.`, `..`, hidden or a temp name, whatever the identifier.
/// Names longer than ``maximumPlainLength`` bytes keep a readable prefix and end in `~` plus the
/// XXH64 of the whole identifier (`~` never appears unescaped otherwise); the full identifier is
/// then read from the file's header, which also guards against hash collisions.
enum FileNameCoding {
    /// Longest name stored as the plain escaped identifier (ext4 allows 255 bytes).
    static let maximumPlainLength = 200
    /// Bytes of escaped identifier kept before the hash in a long name.
    static let hashedPrefixLength = 160

    /// What a file name says about its blob.
    enum Decoded: Equatable {
        /// The name spells the identifier.
        case identifier(String)
        /// A long identifier: read the file's header for it.
        case hashed
        /// Not a name this store writes.
        case foreign
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func needsEscape(_ byte: UInt8, atStart: Bool) -> Bool {
        byte == 0x2F || byte == 0x25 || byte == 0x7E || (atStart && byte == 0x2E)
    }

    /// The file name for a valid identifier.
    static func name(for identifier: String) -> String {
        let original = identifier
        var identifier = identifier
        return identifier.withUTF8 { bytes -> String in
            var escapes = 0
            for index in bytes.indices where needsEscape(bytes[index], atStart: index == 0) { escapes &+= 1 }
            let length = bytes.count &+ 2 &* escapes
            // Every read maps a name: most identifiers need no escape and are their own file name.
            if escapes == 0, length <= maximumPlainLength { return original }
            // Identifiers with `/` are common (`photos/cats/tom.png`): written straight into the String's
            // storage: appending to an array byte by byte cost far more, on every read.
            if length <= maximumPlainLength { return String(unsafeUninitializedCapacity: length) { escape(bytes, into: $0).count } }
            var out = [UInt8](repeating: 0, count: length)
            let cut = out.withUnsafeMutableBufferPointer { escape(bytes, into: $0).safeCut }
            out.removeSubrange(cut...)
            out.append(0x7E)
            out.append(contentsOf: ETag(checksum: XXH64.hash(UnsafeRawBufferPointer(bytes))).rawValue.utf8)
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Writes the escaped form of `bytes` into `out` (room for all of it); returns its length and the
    /// longest prefix of at most ``hashedPrefixLength`` bytes that a long name may keep: one that ends
    /// before a byte starting a UTF-8 sequence, so it never splits a character or an escape.
    private static func escape(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, safeCut: Int) {
        var position = 0
        var safeCut = 0
        for index in bytes.indices {
            let byte = bytes[index]
            if byte & 0xC0 != 0x80, position <= hashedPrefixLength { safeCut = position }
            if needsEscape(byte, atStart: index == 0) {
                out[position] = 0x25
                out[position &+ 1] = hexDigits[Int(byte >> 4)]
                out[position &+ 2] = hexDigits[Int(byte & 0xF)]
                position &+= 3
            } else {
                out[position] = byte
                position &+= 1
            }
        }
        return (position, safeCut)
    }

    /// Reads a file name back.
    static func decode(_ name: String) -> Decoded {
        let bytes = Array(name.utf8)
        if bytes.contains(0x7E) { return .hashed }
        // The store hashes every name that would be longer (found by the identifier-mapping fuzz
        // target): a longer plain name is not one of ours, whatever it spells.
        if bytes.count > maximumPlainLength { return .foreign }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == 0x25 {
                guard i + 2 < bytes.count, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else { return .foreign }
                let decoded = hi << 4 | lo
                guard needsEscape(decoded, atStart: out.isEmpty) else { return .foreign }
                out.append(decoded)
                i += 3
            } else {
                if needsEscape(byte, atStart: out.isEmpty) { return .foreign }
                out.append(byte)
                i += 1
            }
        }
        guard case .success(let identifier) = BlobIdentifier.decode(out) else { return .foreign }
        return .identifier(identifier)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
}
