/// Which blob a key of a bucket notification names.
extension S3StoreLayout {
    /// The store and identifier of blob key `key` (`PREFIX/NAME/ID`), or `nil` for a key outside
    /// the prefix, a store marker (`PREFIX/.stores/NAME`) or any other key that is not a blob's.
    package func blob(ofKey key: String) -> (store: String, identifier: String)? {
        let bytes = key.utf8
        guard bytes.starts(with: keyPrefix.utf8) else { return nil }
        let rest = bytes.dropFirst(keyPrefix.utf8.count)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let store = rest[rest.startIndex..<slash]
        let identifier = rest[rest.index(after: slash)...]
        // A store name starts with a letter or digit: `.stores` and anything else are not stores.
        guard let first = store.first, first != UInt8(ascii: "."), !identifier.isEmpty else { return nil }
        return (String(decoding: store, as: UTF8.self), String(decoding: identifier, as: UTF8.self))
    }
}
