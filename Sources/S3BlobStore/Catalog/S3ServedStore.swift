import BlobStore
import Foundation

/// An ``S3BlobStore`` as blobd serves it, for as long as the store is not a ``ServedBackend``
/// itself: blobd's catalog uses the store directly once it is (see `DaemonS3Backend`), and this
/// bridge then goes unused. Every call is the store's own blocking operation, on the caller's
/// (blocking-work) thread.
package final class S3ServedStore: ServedBackend, S3ConditionalReading {
    /// The store.
    package let store: S3BlobStore

    /// Serves `store`.
    package init(_ store: S3BlobStore) { self.store = store }

    package var name: String { store.name }

    /// Never at once: every read asks the object store.
    package func openIfReady(_ identifier: String) -> (any ServedBlob)? { nil }

    /// GETs the blob; its content is read when the response needs it (a HEAD drops the connection instead).
    package func open(_ identifier: String) throws -> any ServedBlob {
        guard let opened = try store.openContent(identifier, range: nil) else { throw BlobStoreError.notFound(store: name, identifier: identifier) }
        return S3ServedBlob(metadata: opened.metadata, reader: opened.reader)
    }

    package func fetch(_ identifier: String, ifNoneMatch objectETag: String?) throws -> S3Fetch {
        try store.fetch(identifier, ifNoneMatch: objectETag)
    }

    package func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let key = try store.key(for: id)
        return S3ServedUpload(store: store, identifier: id, key: key, options: options)
    }

    package func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        try store.removeBlob(identifier, condition: condition)
    }

    package func removeAll() async throws { try store.removeEverything() }

    package func list(_ query: ListQuery) async throws -> ListPage { try store.listPage(query) }

    /// Reads every blob whole, which checks its content against its XXH64 ETag; nothing is moved
    /// (there is no quarantine in a bucket), so a repair reports what it found and moves nothing.
    package func verify(repair: Bool) async throws -> VerificationReport {
        var healthy = 0
        var corrupt: [VerificationReport.Finding] = []
        var cursor: String?
        repeat {
            let page = try store.listPage(ListQuery(cursor: cursor))
            for item in page.items {
                do {
                    _ = try store.readBlob(item.identifier)
                    healthy += 1
                } catch BlobStoreError.corrupt(let path, let reason) {
                    // (Finding has no initializer outside its module; it is Codable.)
                    let fields = ["path": path, "identifier": item.identifier, "reason": reason]
                    corrupt.append(try JSONDecoder().decode(VerificationReport.Finding.self, from: JSONEncoder().encode(fields)))
                } catch BlobStoreError.notFound {
                    continue  // removed since it was listed
                }
            }
            cursor = page.nextCursor
        } while cursor != nil
        return VerificationReport(healthy: healthy, corrupt: corrupt, orphaned: [], quarantined: repair ? [] : nil)
    }

    package func statistics() async throws -> StoreStatistics { try await store.statistics() }

    package func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) { store.observeChanges(observer) }

    /// None: a store on S3 keeps every blob until it is removed or expires.
    package func policy() async throws -> StorePolicy { .unlimited }

    /// Only ``StorePolicy/unlimited`` (no limits) is accepted.
    package func setPolicy(_ policy: StorePolicy) async throws {
        guard policy == .unlimited else { throw BlobStoreError.invalidQuery(store: name, reason: "a store on S3 has no cache policy") }
    }
}

/// A version being read from S3: its content arrives when ``read(_:)`` asks for it.
final class S3ServedBlob: ServedBlob, @unchecked Sendable {
    let metadata: BlobMetadata
    private let reader: S3ObjectContentReader
    /// The whole content once read (one reader, one owner at a time: ``ServedBlob``'s contract).
    private var content: Data?

    init(metadata: BlobMetadata, reader: S3ObjectContentReader) {
        self.metadata = metadata
        self.reader = reader
    }

    var readsWithoutWaiting: Bool { false }
    var fileBody: BlobReadHandle? { nil }

    /// Reads (once) and checks the whole content, and answers `range` of it.
    func read(_ range: Range<Int64>) throws -> Data {
        let all = try content ?? reader.readAll(expectedCount: metadata.size)
        content = all
        let upper = min(range.upperBound, metadata.size)
        let lower = min(range.lowerBound, upper)
        return all.subdata(in: Int(lower)..<Int(upper))
    }

    func close() { reader.close() }
}

/// A put through ``S3ServedStore``: content is spooled (in memory, then a temp file) and stored by
/// the store's own commit (conditional PUTs) when the upload commits.
final class S3ServedUpload: BackendUpload, @unchecked Sendable {
    private let store: S3BlobStore
    private let identifier: String
    private let key: String
    private let options: PutOptions
    private let spool: S3ContentSpool
    private var finished = false

    init(store: S3BlobStore, identifier: String, key: String, options: PutOptions) {
        self.store = store
        self.identifier = identifier
        self.key = key
        self.options = options
        spool = S3ContentSpool(store: store.name, identifier: identifier, folder: store.spoolFolder)
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard !finished else { return }
        do { try spool.append(bytes) } catch {
            cancel()
            throw error
        }
    }

    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
        guard !finished else { return }
        finished = true
        completion(Result { try store.commit(spool, identifier: identifier, key: key, options: options) })
    }

    func cancel() {
        finished = true
        spool.close()
    }
}
