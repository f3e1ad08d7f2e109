import BlobStore
import Foundation

/// Every store implementation the behavioural suite runs against.
///
/// Each test takes a `StoreKind` argument and reaches its store only through ``makeStore(_:)``
/// (wrapped by ``withStore(_:_:)``) and the ``BlobStoring`` protocol, so adding a case here runs
/// the whole suite against one more implementation.
enum StoreKind: CaseIterable, Sendable, CustomStringConvertible {
    case memory
    case file
    /// A file store that sends every read through its queue (`inlineCachedReads: false`): the path
    /// reads take when the kernel's caches cannot serve them.
    case fileQueuedReads

    var description: String {
        switch self {
        case .memory: return "memory"
        case .file: return "file"
        case .fileQueuedReads: return "file, queued reads"
        }
    }
}

/// A fresh, empty store of `kind`.
func makeStore(_ kind: StoreKind) throws -> any BlobStoring {
    switch kind {
    case .memory:
        return try InMemoryBlobStore(name: "behaviour")
    case .file, .fileQueuedReads:
        // Small buckets, so the suite also exercises bucket splits; relaxed, as durability has its own tests.
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("blobstore-behaviour-" + UUID().uuidString)
        return try PersistentDataStore(
            name: "behaviour", root: root,
            configuration: StoreConfiguration(durability: .relaxed, bucketCapacity: 64, inlineCachedReads: kind == .file))
    }
}

/// Releases what ``makeStore(_:)`` made for `store` (for a file store: its temporary folder).
func discardStore(_ store: any BlobStoring, kind: StoreKind) async {
    switch kind {
    case .memory:
        break
    case .file, .fileQueuedReads:
        if let store = store as? PersistentDataStore { try? FileManager.default.removeItem(at: store.rootURL) }
    }
}

/// Runs `body` with a fresh store of `kind`, then discards the store whether or not `body` threw.
func withStore(_ kind: StoreKind, _ body: (any BlobStoring) async throws -> Void) async throws {
    let store = try makeStore(kind)
    do {
        try await body(store)
        await discardStore(store, kind: kind)
    } catch {
        await discardStore(store, kind: kind)
        throw error
    }
}
