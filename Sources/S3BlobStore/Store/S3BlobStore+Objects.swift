import BlobStore
import Foundation

/// What a HEAD or GET found at a blob's key: S3's ETag, and the blob's metadata or why the object
/// is not one of the store's blobs.
struct S3FoundObject: Sendable {
    /// S3's ETag, unquoted.
    var objectETag: String
    /// The decoded metadata, or why the object is foreign.
    var metadata: Result<BlobMetadata, S3MetadataHeader.Invalid>

    /// The metadata when the object is a blob that has not expired at `now`.
    func live(at now: Date) -> BlobMetadata? {
        guard case .success(let metadata) = metadata else { return nil }
        if let expires = metadata.expires, expires <= now { return nil }
        return metadata
    }
}

extension S3BlobStore {
    /// Reads an answer's headers into what was found: `objectSize` is the whole object's length
    /// (`Content-Length` of a HEAD or a whole GET, the total of a `206`'s `Content-Range`).
    func found(_ headers: some Sequence<(name: String, value: String)>, key: String, identifier: String, context: S3ErrorContext, ranged: Bool)
        throws(BlobStoreError) -> (S3FoundObject, S3ObjectHead)
    {
        let head: S3ObjectHead
        do {
            head = try S3ObjectHead(headers: headers)
        } catch {
            throw unavailable(context, reason: error.reason)
        }
        guard let objectETag = head.etag, !objectETag.isEmpty else { throw unavailable(context, reason: "no ETag") }
        let objectSize = ranged ? head.contentRange?.total : head.contentLength
        let metadata: Result<BlobMetadata, S3MetadataHeader.Invalid>
        if let value = head.metadata[S3MetadataHeader.name] {
            do throws(S3MetadataHeader.Invalid) {
                metadata = .success(try S3MetadataHeader.decode(value, identifier: identifier, objectSize: objectSize))
            } catch {
                metadata = .failure(error)
            }
        } else {
            metadata = .failure(S3MetadataHeader.Invalid(reason: "the object has no x-amz-meta-blob header"))
        }
        let object = S3FoundObject(objectETag: objectETag, metadata: metadata)
        if case .success(let blob) = metadata { remember(identifier, object: objectETag, blob) }
        return (object, head)
    }

    /// HEAD of `key`: what is there, or `nil` when nothing is. Blocking.
    func headObject(key: String, identifier: String) throws(BlobStoreError) -> S3FoundObject? {
        let context = client.bucket.context("HeadObject", key: key)
        let request: S3Request
        do {
            request = try client.bucket.headObject(key: key)
        } catch {
            throw unavailable(.refused(error))
        }
        do {
            let response = try client.send(request, context: context)
            return try found(response.headers, key: key, identifier: identifier, context: context, ranged: false).0
        } catch let error as S3ClientError {
            if Self.isMissingKey(error) {
                forget(identifier)
                return nil
            }
            throw unavailable(error)
        } catch let error as BlobStoreError {
            throw error
        } catch {
            throw unavailable(context, reason: "\(error)")
        }
    }

    /// The current, unexpired metadata of blob `identifier`; throws `notFound`, or `corrupt` for a
    /// foreign object. Blocking.
    func headBlob(_ identifier: String) throws(BlobStoreError) -> (metadata: BlobMetadata, objectETag: String) {
        let key = try key(for: identifier)
        guard let object = try headObject(key: key, identifier: identifier) else { throw .notFound(store: name, identifier: identifier) }
        switch object.metadata {
        case .failure(let invalid):
            throw foreign(key, invalid)
        case .success:
            guard let metadata = object.live(at: now()) else { throw .notFound(store: name, identifier: identifier) }
            return (metadata, object.objectETag)
        }
    }

    // MARK: Hints

    /// Remembers what was seen of `identifier`'s object.
    func remember(_ identifier: String, object objectETag: String, _ metadata: BlobMetadata) {
        let hint = S3StoreState.Hint(objectETag: objectETag, etag: metadata.etag, created: metadata.created, expires: metadata.expires)
        state.withLock { $0.hints[Array(identifier.utf8)] = hint }
    }

    /// Forgets `identifier`'s hint (its object is gone).
    func forget(_ identifier: String) {
        state.withLock { _ = $0.hints.removeValue(forKey: Array(identifier.utf8)) }
    }

    /// The hint for `identifier`, if any.
    func hint(_ identifier: String) -> S3StoreState.Hint? {
        state.withLock { $0.hints[Array(identifier.utf8)] }
    }
}
