import Foundation

/// The file store as a served backend. Reads the kernel's caches can answer at once are served
/// by ``openIfReady(_:)`` without leaving the caller's thread (`openat2` with `RESOLVE_CACHED`,
/// `preadv2` with `RWF_NOWAIT`; see ``StoreConfiguration/inlineCachedReads``); everything else runs
/// on the store's queues or the calling (blocking-work) thread.
extension PersistentDataStore: ServedBackend {
    package func openIfReady(_ identifier: String) -> (any ServedBlob)? {
        guard configuration.inlineCachedReads, BlobIdentifier.violation(in: identifier) == nil,
            let blob = core.cachedReads.open(identifier, readLength: PersistentDataStore.blockingReadLength)
        else { return nil }
        return BlobReadHandle(blob)
    }

    package func open(_ identifier: String) throws -> any ServedBlob {
        try openForReading(identifier)
    }

    package func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        try beginUpload(identifier: identifier, options: options)
    }
}

/// A file-backed version: small content arrives with the header; larger content is sent from the file.
extension BlobReadHandle: ServedBlob {
    package var readsWithoutWaiting: Bool { Int64(leadingContent.count) == metadata.size }

    package var fileBody: BlobReadHandle? { self }
}

/// A relaxed commit completes on the calling thread when the committer is idle; a durable one on the store's commit thread.
extension BlobUpload: BackendUpload {}
