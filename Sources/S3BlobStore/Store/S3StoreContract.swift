import BlobStore

// The seams between the S3 store and what is built around it: blobd's read cache (which validates
// what it holds with conditional GETs) and the fleet's change feed (bucket notifications).

/// A blob version as it is stored in S3: the store's metadata (its own XXH64 ETag among it) and
/// the object's ETag, which S3's conditional requests (`If-Match`, `If-None-Match`) name.
package struct S3StoredVersion: Sendable, Hashable {
    /// The blob's metadata, as ``S3BlobStore`` reports it.
    package var metadata: BlobMetadata
    /// S3's ETag of the object, unquoted (an MD5, or `MD5-N` for a multipart upload).
    package var objectETag: String

    /// A version from its parts.
    package init(metadata: BlobMetadata, objectETag: String) {
        self.metadata = metadata
        self.objectETag = objectETag
    }
}

/// The content of a fetched object, read as it arrives from the object store. One owner reads it
/// to the end or closes it; closing early drops the connection.
package protocol S3ContentReader: AnyObject, Sendable {
    /// Fills the start of `buffer` and returns how many bytes; 0 at the end. Throws when the
    /// connection fails or the content ends short of its length. Blocking.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Stops reading (later reads return 0).
    func close()
    /// Whether the reader checks the whole content against the version's size and XXH64 itself,
    /// throwing instead of returning the last piece when it does not match (so a caller need not
    /// hash it again).
    var checksContent: Bool { get }
}

extension S3ContentReader {
    /// Unchecked, unless a reader says otherwise.
    package var checksContent: Bool { false }
}

/// What a conditional read found.
package enum S3Fetch: Sendable {
    /// The object still has the ETag the caller named: the caller's copy is current.
    case notModified
    /// The current version, and its content to read.
    case fetched(S3StoredVersion, any S3ContentReader)
}

/// Conditional whole-blob reads: what a read cache in front of S3 needs.
package protocol S3ConditionalReading: Sendable {
    /// The current version of `identifier` with its content, or ``S3Fetch/notModified`` when its
    /// object ETag is still `objectETag`. Throws ``BlobStoreError/notFound(store:identifier:)`` when
    /// there is no such blob (or it has expired). Blocking: call it off the cooperative pool.
    func fetch(_ identifier: String, ifNoneMatch objectETag: String?) throws -> S3Fetch
}

/// A change another fleet member made to the bucket, as a bucket notification reports it.
package enum S3RemoteChange: Sendable, Hashable {
    /// An object of the store was written; `objectETag` is S3's (unquoted).
    case stored(identifier: String, objectETag: String)
    /// An object of the store was removed.
    case removed(identifier: String)
}

/// Takes the changes other fleet members made, and passes them on to the store's observers as
/// ``BlobChange`` events (a change this store made itself, which the bucket also notifies, is
/// dropped: its observers had it when it was made).
package protocol S3RemoteChangeReceiving: Sendable {
    /// Passes `change` on. May block (a stored object's metadata is read with HEAD).
    func receiveRemoteChange(_ change: S3RemoteChange)
}
