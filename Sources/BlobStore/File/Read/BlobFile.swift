internal import BlobSystem
import Foundation

/// A blob file kept outside any store (an S3 read cache's entry), in the file store's own format:
/// the header (``BlobHeader``: metadata, ETag) then the content. Reading one goes through the same
/// path as a stored blob's, so its content is checked against its ETag on every read and a server
/// sends it with `sendfile` (``BlobReadHandle``).
package enum BlobFile {
    /// The header of a file holding the version `metadata` describes; its ETag is the XXH64 of the content that follows.
    package static func header(for metadata: BlobMetadata) -> [UInt8] {
        BlobHeader(
            identifier: metadata.identifier, size: metadata.size, checksum: metadata.etag.checksum,
            createdNanoseconds: metadata.created.nanosecondsSince1970, modifiedNanoseconds: metadata.modified.nanosecondsSince1970,
            contentType: metadata.contentType, userMetadata: metadata.userMetadata, image: metadata.image,
            expiresNanoseconds: metadata.expires?.nanosecondsSince1970
        ).encoded()
    }

    /// Opens the blob file at `path`, which must hold `identifier` (of `store`, named in errors):
    /// `nil` when there is no file; ``BlobStoreError/corrupt(path:reason:)`` when its header does
    /// not decode or names another blob, `io` when it cannot be read.
    package static func open(path: String, store: String, identifier: String) throws -> BlobReadHandle? {
        guard let blob = try BlobReader(store: store).open(at: path, identifier: identifier, readLength: PersistentDataStore.blockingReadLength) else {
            return nil
        }
        return BlobReadHandle(blob)
    }
}
