internal import BlobSystem

/// The sorted entries of the bucket a listing read last, kept for the listing's next page while that
/// bucket is unchanged: a listing reads pages of up to 10,000 from buckets of up to ~8,000 blobs, so
/// consecutive pages mostly fall in one bucket, whose folder is then read and sorted once.
///
/// Owned by the store's engine; its own mutex guards it. An entry is valid only for the bucket
/// version it was read at (``BucketIndex/version(ofBucket:)``).
final class ListingCache: Sendable {
    /// A bucket's sorted entries as of one version of the bucket.
    private struct Listed {
        var bucket: Int
        var version: UInt64
        var entries: [BucketEntry]
    }

    private let last = Locked<Listed?>(nil)

    /// The entries kept for bucket `number` at `version`, if any.
    func entries(ofBucket number: Int, version: UInt64) -> [BucketEntry]? {
        guard let listed = last.withLock({ $0 }), listed.bucket == number, listed.version == version else { return nil }
        return listed.entries
    }

    /// Keeps `entries`, read from bucket `number` at `version`.
    func keep(_ entries: [BucketEntry], ofBucket number: Int, version: UInt64) {
        last.withLock { $0 = Listed(bucket: number, version: version, entries: entries) }
    }

    /// Drops what is kept (the folders changed behind the index's versions).
    func forget() { last.withLock { $0 = nil } }
}
