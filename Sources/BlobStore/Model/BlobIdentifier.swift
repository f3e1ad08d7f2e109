/// The rules a blob identifier must follow, and their checks.
///
/// An identifier is any UTF-8 string of 1–1024 bytes without control characters;
/// `/` is allowed (object-key style). Nothing in it is interpreted as a path.
public enum BlobIdentifier {
    /// The longest identifier, in UTF-8 bytes.
    public static let maximumByteCount = 1024

    /// Which rule an invalid identifier broke.
    public enum Rule: Sendable, Hashable, CustomStringConvertible {
        /// The identifier is the empty string.
        case empty
        /// The identifier is longer than ``BlobIdentifier/maximumByteCount`` UTF-8 bytes.
        case tooLong(byteCount: Int)
        /// The identifier contains a control character (C0, DEL or C1), e.g. NUL or a newline.
        case controlCharacter(scalar: UInt32, byteOffset: Int)
        /// The identifier's bytes are not valid UTF-8.
        case invalidUTF8
        /// The identifier has an empty, `.` or `..` segment between slashes (a leading or trailing
        /// `/`, `//`, `/./`, `/../`), starting at `byteOffset`. URL clients (curl, browsers, WHATWG
        /// URL parsers) rewrite such paths, so the daemon refuses them (``urlViolation(in:)``); the
        /// embedded store takes them, as it takes any name.
        case unaddressableSegment(byteOffset: Int)

        /// The rule as a sentence.
        public var description: String {
            switch self {
            case .empty:
                return "an identifier must not be empty"
            case .tooLong(let count):
                return "an identifier is at most \(BlobIdentifier.maximumByteCount) UTF-8 bytes (this one has \(count))"
            case .controlCharacter(let scalar, let offset):
                let hex = String(scalar, radix: 16, uppercase: true)
                return "an identifier must not contain control characters (U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex) at byte \(offset))"
            case .invalidUTF8:
                return "an identifier must be valid UTF-8"
            case .unaddressableSegment(let offset):
                return "an identifier in a URL must not have an empty, '.' or '..' segment between slashes "
                    + "(segment at byte \(offset)): URL clients rewrite such paths and would address another blob"
            }
        }
    }

    /// The first rule `identifier` breaks, or `nil` if it is valid.
    public static func violation(in identifier: String) -> Rule? {
        // Every read and write checks its identifier: printable ASCII (the usual case) is settled
        // over the UTF-8 bytes, without decoding scalars.
        let printableASCII = identifier.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.isEmpty && bytes.count <= maximumByteCount && bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        }
        if printableASCII == true { return nil }
        var byteCount = 0
        for scalar in identifier.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value) {
                return .controlCharacter(scalar: value, byteOffset: byteCount)
            }
            byteCount += UTF8.width(scalar)
        }
        if byteCount == 0 { return .empty }
        if byteCount > maximumByteCount { return .tooLong(byteCount: byteCount) }
        return nil
    }

    /// The first rule `identifier` breaks as a blob URL's path, or `nil`: ``violation(in:)``, then
    /// ``unaddressableSegment(in:)``. The daemon refuses such identifiers on every blob request.
    package static func urlViolation(in identifier: String) -> Rule? {
        violation(in: identifier) ?? unaddressableSegment(in: identifier)
    }

    /// ``Rule/unaddressableSegment(byteOffset:)`` if a segment of `identifier` between slashes is
    /// empty, `.` or `..` (a URL client would remove or resolve it, so the request would name
    /// another blob); `nil` otherwise. Checks nothing else.
    package static func unaddressableSegment(in identifier: String) -> Rule? {
        var identifier = identifier
        // Runs for every blob request: scanned over the contiguous UTF-8 bytes.
        return identifier.withUTF8 { bytes in
            var segmentStart = 0
            for index in 0...bytes.count {
                guard index == bytes.count || bytes[index] == 0x2F else { continue }
                let length = index - segmentStart
                if length == 0 || (length <= 2 && bytes[segmentStart] == 0x2E && bytes[index - 1] == 0x2E) {
                    return .unaddressableSegment(byteOffset: segmentStart)
                }
                segmentStart = index + 1
            }
            return nil
        }
    }

    /// Decodes and checks raw bytes (for example from a URL): the identifier, or the rule broken.
    package static func decode(_ bytes: some Collection<UInt8>) -> Result<String, BlobStoreError> {
        guard let string = String(validating: bytes, as: UTF8.self) else {
            return .failure(.invalidIdentifier(identifier: String(decoding: bytes, as: UTF8.self), rule: .invalidUTF8))
        }
        if let rule = violation(in: string) { return .failure(.invalidIdentifier(identifier: string, rule: rule)) }
        return .success(string)
    }

    /// Throws ``BlobStoreError/invalidIdentifier(identifier:rule:)`` if `identifier` breaks a rule.
    public static func validate(_ identifier: String) throws(BlobStoreError) {
        if let rule = violation(in: identifier) { throw .invalidIdentifier(identifier: identifier, rule: rule) }
    }
}
