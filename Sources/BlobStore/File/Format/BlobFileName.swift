/// The store's naming of blob files, for tools and property tests (the fuzz targets): the one path
/// component a blob's file gets inside its bucket folder, and what a file name reads back as.
///
/// A thin face of the internal coding in `FileNameCoding` for the fuzz targets and tests; see docs/STORAGE.md.
package enum BlobFileName {
    /// Longest file name the store writes, in bytes (ext4 allows 255).
    package static let maximumLength = FileNameCoding.maximumPlainLength

    /// The file name of a valid identifier.
    ///
    /// - Throws: ``BlobStoreError/invalidIdentifier(identifier:rule:)`` for an identifier the store refuses.
    package static func name(for identifier: String) throws(BlobStoreError) -> String {
        try BlobIdentifier.validate(identifier)
        return FileNameCoding.name(for: identifier)
    }

    /// The identifier a file name spells; `nil` for a long identifier's hashed name (whose
    /// identifier is only in the file's header) and for names the store never writes.
    package static func identifier(fromName name: String) -> String? {
        if case .identifier(let identifier) = FileNameCoding.decode(name) { return identifier }
        return nil
    }

    /// Whether `name` is a long identifier's hashed name.
    package static func isHashed(_ name: String) -> Bool {
        FileNameCoding.decode(name) == .hashed
    }
}
