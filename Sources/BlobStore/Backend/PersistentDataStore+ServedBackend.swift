import Foundation

/// The file store as a served backend. Small hot blobs are served from its memory tier
/// (``MemoryTier``) with no file system call; reads the kernel's caches can answer at once are served
/// by ``openIfReady(_:)`` without leaving the caller's thread (`openat2` with `RESOLVE_CACHED`,
/// `preadv2` with `RWF_NOWAIT`; see ``StoreConfiguration/inlineCachedReads``); everything else runs
/// on the store's queues or the calling (blocking-work) thread.
extension PersistentDataStore: ServedBackend {
    package func openIfReady(_ identifier: String) -> (any ServedBlob)? {
        guard BlobIdentifier.violation(in: identifier) == nil else { return nil }
        return servedIfReady(identifier)
    }

    package func open(_ identifier: String) throws -> any ServedBlob {
        try served(identifier)
    }

    package var memoryTierFigures: MemoryTierStatistics? { core.memoryTier.statistics }

    package func cacheFigures() async throws -> CacheCounters? { try await cacheCounters() }

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
