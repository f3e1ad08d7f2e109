/// The rules for store names: `[a-z0-9][a-z0-9._-]{0,62}`.
///
/// A store name becomes a folder name under the root, so the rule keeps it portable and
/// keeps it from ever being `.`, `..` or a hidden file.
public enum StoreName {
    /// The longest store name.
    public static let maximumLength = 63

    /// Why `name` is not a valid store name, or `nil` if it is.
    public static func violation(in name: String) -> String? {
        let bytes = name.utf8
        guard let first = bytes.first else { return "a store name must not be empty" }
        if bytes.count > maximumLength { return "a store name is at most \(maximumLength) characters (this one has \(bytes.count))" }
        func isLowerAlphanumeric(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) }
        if !isLowerAlphanumeric(first) { return "a store name must start with a lowercase letter or digit" }
        for (offset, byte) in bytes.enumerated().dropFirst()
        where !(isLowerAlphanumeric(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D) {
            return "a store name may contain only a-z, 0-9, '.', '_' and '-' (character \(offset + 1) is not allowed)"
        }
        return nil
    }

    /// Throws ``BlobStoreError/invalidStoreName(name:reason:)`` if `name` breaks the rule.
    public static func validate(_ name: String) throws(BlobStoreError) {
        if let reason = violation(in: name) { throw .invalidStoreName(name: name, reason: reason) }
    }
}
