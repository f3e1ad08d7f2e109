internal import BlobSystem
public import BlobStore
import Foundation

/// A blob store in an S3 bucket (AWS S3, Ceph's RADOS Gateway, MinIO): store `NAME`'s blob `ID` is
/// the object `PREFIX/NAME/ID` (``S3StoreLayout``), its bytes exactly the blob's, its metadata in one
/// header (docs/SCALE-OUT.md, "Design" and "Consistency").
///
/// Every put up to the multipart threshold is a conditional PUT that S3 checks atomically
/// (`If-None-Match: *` or `If-Match`), so conditional writes hold across every process sharing the
/// bucket, and `created` survives overwrites; above it, the condition is checked with a HEAD before
/// the upload, not atomically (``sendLargeSpooledFile(key:file:length:headers:condition:)``). Reads
/// check the content against its XXH64 ETag. Listing sorts by identifier only (S3 lists keys); there
/// is no cache policy.
///
/// ## Who owns what
/// - `state` (a `Locked`) owns the hints (the object ETag and `created` this instance last saw per
///   identifier, bounded), the record of this instance's own writes and removals (to drop their
///   echoes from the fleet's change feed), the change sequence, subscribers and observers.
/// - Every S3 request is blocking I/O: async calls run it on threads of their own (``BlockingThreads``),
///   never on the cooperative pool; the ``ServedBackend`` calls run it on the caller's blocking thread,
///   except an upload's commit, which runs on a transport thread of its own (``S3Upload``).
/// - Put content belongs to its put until sent: in memory up to ``memorySpoolLimit``, beyond in an
///   unlinked temp file in ``spoolFolder``.
public final class S3BlobStore: BlobStoring {
    /// The store's name.
    public let name: String
    /// Where requests go.
    package let client: S3Client
    /// Where the store's objects live in the bucket.
    package let layout: S3StoreLayout
    /// Where content over ``memorySpoolLimit`` waits while it is checked and sent.
    package let spoolFolder: URL
    /// `s3://BUCKET/PREFIX at ENDPOINT`, as errors name the backend.
    package let backendDescription: String

    /// Content up to this size is gathered in memory for its PUT; larger content is spooled.
    package static let memorySpoolLimit = 8 << 20
    /// The largest object one PUT stores (S3's limit); larger needs a multipart upload.
    package static let maximumSinglePutByteCount: Int64 = 5 << 30
    /// How many PUTs one put tries on a key other writers keep changing: a conditional put then gives
    /// up; an unconditional one makes its last attempt without a condition.
    package static let maximumPutAttempts = 8
    /// S3 requests run at once by one list, remove-all or verify.
    package static let parallelRequests = 8

    /// Content above this many bytes goes up as a multipart upload.
    package let multipartThreshold: Int64
    /// Called before each part of a multipart upload is sent, with its number (tests: another
    /// writer acting while the parts go up).
    package let beforeMultipartPart: (@Sendable (_ partNumber: Int) throws(S3ClientError) -> Void)?

    let state = Locked(S3StoreState())

    /// A store named `name` in `client`'s bucket, laid out by `layout`; content over 8 MiB is spooled
    /// in `spoolFolder` (the system's temp folder when `nil`). No I/O: a bucket that cannot be
    /// reached shows with the first operation, as ``BlobStoreError/backendUnavailable(store:backend:reason:)``.
    ///
    /// Content larger than `multipartThreshold` bytes is sent as a multipart upload (the only way
    /// past S3's 5 GiB single PUT); see ``sendLargeSpooledFile(key:file:length:headers:condition:)``.
    package init(
        name: String, client: S3Client, layout: S3StoreLayout, spoolFolder: URL? = nil,
        multipartThreshold: Int64 = S3BlobStore.maximumSinglePutByteCount,
        beforeMultipartPart: (@Sendable (_ partNumber: Int) throws(S3ClientError) -> Void)? = nil
    ) {
        self.beforeMultipartPart = beforeMultipartPart
        self.multipartThreshold = min(max(multipartThreshold, Int64(S3Bucket.minimumPartByteCount)), Self.maximumSinglePutByteCount)
        self.name = name
        self.client = client
        self.layout = layout
        self.spoolFolder = spoolFolder ?? URL(fileURLWithPath: NSTemporaryDirectory())
        var prefix = layout.keyPrefix
        if prefix.hasSuffix("/") { prefix.removeLast() }
        backendDescription = "s3://\(client.bucket.name)\(prefix.isEmpty ? "" : "/" + prefix) at \(client.bucket.endpoint)"
    }

    /// A store named `name` in `bucket` under `keyPrefix`, reached with `configuration` (see
    /// ``S3Configuration/resolve(environment:)``). No I/O. Throws
    /// ``BlobStoreError/invalidStoreName(name:reason:)`` for a bad name, and
    /// ``BlobStoreError/backendUnavailable(store:backend:reason:)`` for an endpoint it cannot speak to.
    public convenience init(name: String, bucket: String, keyPrefix: String = "", configuration: S3Configuration) throws {
        try StoreName.validate(name)
        let client: S3Client
        do {
            client = try S3Client(configuration: configuration, bucket: bucket)
        } catch {
            throw BlobStoreError.backendUnavailable(
                store: name, backend: "s3://\(bucket)/\(keyPrefix) at \(configuration.endpoint)", reason: error.description)
        }
        self.init(name: name, client: client, layout: S3StoreLayout(prefix: keyPrefix))
    }

    deinit {
        for continuation in state.withLock({ $0.changes.takeSubscribers() }) { continuation.finish() }
    }

    // MARK: - Keys and errors

    /// The object key of `identifier`, after checking the identifier's rules and the key limit.
    package func key(for identifier: String) throws(BlobStoreError) -> String {
        try BlobIdentifier.validate(identifier)
        let limit = layout.maximumIdentifierByteCount(store: name)
        let count = identifier.utf8.count
        guard count <= limit else {
            throw .tooLarge(
                what: "identifier '\(identifier.prefix(60))…' as an S3 key (a key is at most \(S3Bucket.maximumKeyByteCount) bytes, "
                    + "and '\(layout.blobPrefix(store: name))' comes first)",
                limit: Int64(limit), actual: Int64(count))
        }
        return layout.blobKey(store: name, identifier: identifier)
    }

    /// `s3://BUCKET/KEY`, as errors name an object.
    package func objectURI(_ key: String) -> String { "s3://\(client.bucket.name)/\(key)" }

    /// The backend error for a request that failed: no answer, a 5xx, a 403, a missing bucket or
    /// anything unexpected. (Never "not found": callers map a missing key before this.)
    package func unavailable(_ error: S3ClientError) -> BlobStoreError {
        .backendUnavailable(store: name, backend: backendDescription, reason: error.description)
    }

    /// The backend error for a request S3 answered in a way it should not have.
    package func unavailable(_ context: S3ErrorContext, reason: String) -> BlobStoreError {
        unavailable(.malformedAnswer(context, reason: reason))
    }

    /// The error for an object under the store's prefix that is not one of its blobs.
    package func foreign(_ key: String, _ reason: S3MetadataHeader.Invalid) -> BlobStoreError {
        .corrupt(path: objectURI(key), reason: "not a blob of store '\(name)' (written by another tool?): \(reason.reason)")
    }

    /// Whether a missing-key answer: `404` with `NoSuchKey`, or HEAD's `404` without a body.
    /// (`NoSuchBucket` is a backend error.)
    static func isMissingKey(_ error: S3ClientError) -> Bool {
        guard let answer = error.answer, answer.status == 404 else { return false }
        return answer.code == nil || answer.code == "NoSuchKey"
    }

    /// The current time, at the nanosecond resolution the metadata header keeps.
    func now() -> Date { Date(s3Nanoseconds: Date().s3Nanoseconds) }
}
