/// Where a daemon's stores and their blobs live in a bucket.
///
/// Under the configured key prefix (`""`, or `PREFIX/` from `s3://BUCKET/PREFIX`):
/// - blob `ID` of store `NAME` is the object `PREFIX/NAME/ID`, the identifier's bytes kept as they
///   are, so `aws s3 ls s3://BUCKET/PREFIX/NAME/` lists a store's blobs by identifier;
/// - store `NAME` exists when the object `PREFIX/.stores/NAME` does (it is written when the store
///   is created; a store name starts with a letter or digit, so `.stores` is never a store).
///
/// An S3 key is at most 1,024 UTF-8 bytes, so a store's identifiers are at most
/// ``maximumIdentifierByteCount(store:)`` bytes: 1,024 less the prefix, the name and the slash.
package struct S3StoreLayout: Sendable, Hashable {
    /// The key prefix every key starts with: empty, or ending in `/`.
    package let keyPrefix: String

    /// A layout under `prefix` (a trailing `/` is added when missing; an empty prefix is the bucket's top).
    package init(prefix: String = "") {
        keyPrefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
    }

    /// The prefix of every blob key of `store`: `PREFIX/NAME/`.
    package func blobPrefix(store: String) -> String { keyPrefix + store + "/" }

    /// The key of blob `identifier` in `store`.
    package func blobKey(store: String, identifier: String) -> String { blobPrefix(store: store) + identifier }

    /// The identifier a key of `store` names, or `nil` for a key outside the store's prefix.
    package func identifier(store: String, key: String) -> String? {
        let prefix = blobPrefix(store: store)
        guard key.utf8.count > prefix.utf8.count, key.utf8.starts(with: prefix.utf8) else { return nil }
        return String(decoding: key.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// The prefix of the store markers: `PREFIX/.stores/`.
    package var storeMarkerPrefix: String { keyPrefix + ".stores/" }

    /// The key of the marker object that says `store` exists.
    package func storeMarkerKey(store: String) -> String { storeMarkerPrefix + store }

    /// The longest identifier `store` can hold, in UTF-8 bytes (the key limit less the prefix).
    package func maximumIdentifierByteCount(store: String) -> Int {
        S3Bucket.maximumKeyByteCount - blobPrefix(store: store).utf8.count
    }
}
