import BlobStore
import Dispatch
import Foundation
import S3BlobStore

/// An S3 store as blobd serves it, for the fleet tests, until `S3BlobStore` serves itself: reads
/// through its conditional fetch, puts and everything else through its `BlobStoring` API, and the
/// fleet's remote changes passed on. (A wrapper rather than a conformance, so it cannot clash with
/// the module's own.)
final class FleetTestBackend: ServedBackend, S3ConditionalReading, S3RemoteChangeReceiving {
    let store: S3BlobStore

    init(_ store: S3BlobStore) { self.store = store }

    var name: String { store.name }

    func openIfReady(_ identifier: String) -> (any ServedBlob)? { nil }

    func open(_ identifier: String) throws -> any ServedBlob {
        guard case .fetched(let version, let reader) = try store.fetch(identifier, ifNoneMatch: nil) else {
            throw BlobStoreError.notFound(store: name, identifier: identifier)
        }
        var content = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if count == 0 { break }
            content.append(contentsOf: buffer[..<count])
        }
        return Blob(metadata: version.metadata, content: content)
    }

    func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        Upload(store: store, identifier: identifier, options: options)
    }

    func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        try await store.remove(identifier, condition: condition)
    }

    func removeAll() async throws { try await store.removeAll() }

    func list(_ query: ListQuery) async throws -> ListPage { try await store.list(query) }

    func verify(repair: Bool) async throws -> VerificationReport {
        VerificationReport(healthy: try await store.statistics().count, corrupt: [], orphaned: [], quarantined: repair ? [] : nil)
    }

    func statistics() async throws -> StoreStatistics { try await store.statistics() }

    func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) { store.observeChanges(observer) }

    func policy() async throws -> StorePolicy { StorePolicy() }

    func setPolicy(_ policy: StorePolicy) async throws {}

    func fetch(_ identifier: String, ifNoneMatch objectETag: String?) throws -> S3Fetch {
        try store.fetch(identifier, ifNoneMatch: objectETag)
    }

    func receiveRemoteChange(_ change: S3RemoteChange) { store.receiveRemoteChange(change) }

    struct Blob: ServedBlob {
        let metadata: BlobMetadata
        let content: Data
        var readsWithoutWaiting: Bool { true }
        var fileBody: BlobReadHandle? { nil }

        func read(_ range: Range<Int64>) throws -> Data {
            let upper = min(range.upperBound, metadata.size), lower = min(range.lowerBound, upper)
            return content.subdata(in: Int(lower)..<Int(upper))
        }

        func close() {}
    }

    /// Gathers the content, then puts it in one call. One owner at a time (``BackendUpload``).
    final class Upload: BackendUpload, @unchecked Sendable {
        let store: S3BlobStore
        let identifier: String
        let options: PutOptions
        var content = Data()

        init(store: S3BlobStore, identifier: String, options: PutOptions) {
            self.store = store
            self.identifier = identifier
            self.options = options
        }

        func append(_ bytes: UnsafeRawBufferPointer) throws { content.append(contentsOf: bytes) }

        func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
            let (store, data, identifier, options) = (store, content, identifier, options)
            Task {
                do {
                    completion(.success(try await store.put(data, identifier: identifier, options: options)))
                } catch {
                    completion(.failure(error))
                }
            }
        }

        func cancel() { content = Data() }
    }
}
