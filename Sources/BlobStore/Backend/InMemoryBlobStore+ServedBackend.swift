import Foundation

/// The in-memory store as a served backend: every version is bytes in memory, so nothing is ever
/// sent from a file, and its reads go through its own API (``openIfReady(_:)`` answers `nil`).
extension InMemoryBlobStore: ServedBackend {
    package func openIfReady(_ identifier: String) -> (any ServedBlob)? { nil }

    package func open(_ identifier: String) throws -> any ServedBlob {
        let (metadata, content) = try version(identifier)
        return InMemoryServedBlob(metadata: metadata, content: content)
    }

    package func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        InMemoryUpload(store: self, identifier: try ContentInspection.prepare(store: name, identifier: identifier, options: options), options: options)
    }

    package func cacheFigures() async throws -> CacheCounters? { try await cacheCounters() }

    /// Nothing can rot in memory: every blob is healthy, and a repair moves nothing.
    package func verify(repair: Bool) async throws -> VerificationReport {
        VerificationReport(healthy: try await statistics().count, corrupt: [], orphaned: [], quarantined: repair ? [] : nil)
    }
}

/// A version of an in-memory blob: its bytes, held by value.
struct InMemoryServedBlob: ServedBlob {
    let metadata: BlobMetadata
    let content: Data

    var readsWithoutWaiting: Bool { true }
    var fileBody: BlobReadHandle? { nil }

    func read(_ range: Range<Int64>) throws -> Data {
        let upper = min(range.upperBound, metadata.size)
        let lower = min(range.lowerBound, upper)
        if lower == 0 && upper == metadata.size { return content }
        return content.subdata(in: Int(lower)..<Int(upper))
    }

    func close() {}
}

/// A put into an in-memory store: the content is gathered, then stored (validated, condition
/// checked) in one step by ``commit()``. Used by one owner at a time (``BackendUpload``).
final class InMemoryUpload: BackendUpload {
    private let store: InMemoryBlobStore
    private let identifier: String
    private let options: PutOptions
    private var content = Data()
    private var finished = false

    init(store: InMemoryBlobStore, identifier: String, options: PutOptions) {
        self.store = store
        self.identifier = identifier
        self.options = options
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard !finished else { return }
        content.append(contentsOf: bytes)
    }

    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
        finished = true
        let data = content
        content = Data()
        completion(Result { try store.commit(data, identifier: identifier, options: options) })
    }

    func cancel() {
        finished = true
        content = Data()
    }
}
