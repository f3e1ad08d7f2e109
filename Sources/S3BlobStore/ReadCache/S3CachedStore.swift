import BlobStore
import Foundation

/// A store on S3 read through a daemon's ``S3ReadCache``: what blobd serves for each S3 store.
///
/// A read of a cached blob asks the object store whether the entry is still current with a
/// conditional GET (`If-None-Match` with the object's ETag): `304` serves the entry (from memory for
/// a small blob, else from its file with `sendfile`), new content replaces the entry. Within the
/// configured staleness bound since the last such question was sent, the entry is served without
/// asking, unless its blob has expired. A miss reads the whole blob once, into a new entry, and
/// serves that. Puts, removes and remove-all through this store drop the entries they change before
/// they are acknowledged; a change reported by the backend's observers (another fleet member's)
/// makes the entry due for validation. Everything else goes straight to `backend`.
package final class S3CachedStore: ServedBackend {
    /// The store on S3.
    package let backend: any ServedBackend & S3ConditionalReading
    /// The daemon's cache.
    package let cache: S3ReadCache

    /// `backend` read through `cache`.
    package init(_ backend: any ServedBackend & S3ConditionalReading, cache: S3ReadCache) {
        self.backend = backend
        self.cache = cache
        let (cache, name) = (cache, backend.name)
        backend.observeChanges { change in
            // Quick and without I/O, as observers must be: the next read validates.
            switch change.kind {
            case .put(let metadata): cache.markStale(S3CacheKey(store: name, identifier: metadata.identifier))
            case .removed(let identifier): cache.markStale(S3CacheKey(store: name, identifier: identifier))
            case .removedAll: cache.markAllStale(store: name)
            }
        }
    }

    package var name: String { backend.name }

    /// Never at once: even a cached blob is validated with the object store first, or opened from disk.
    package func openIfReady(_ identifier: String) -> (any ServedBlob)? { nil }

    package func open(_ identifier: String) throws -> any ServedBlob {
        let key = S3CacheKey(store: name, identifier: identifier)
        if let entry = cache.entry(key) {
            if cache.isFresh(entry), let handle = cache.open(key, entry) {
                guard cache.hasExpired(handle.metadata) else {
                    cache.countHit(validated: false)
                    return handle
                }
                // Expired: only the object store can say whether a newer version replaced it.
                handle.close()
            }
            if let served = try validate(key, entry) { return served }
        }
        let question = cache.ask(key)
        defer { cache.finish(question) }
        return try fill(key, try fetch(key, ifNoneMatch: nil), asked: question)
    }

    /// Asks the object store whether `entry` is still the current version (a conditional GET):
    /// serves the entry if it is, a new entry if not; `nil` when the entry's file turned out
    /// unusable (the caller fetches the blob). A current version that has expired is not found:
    /// S3 keeps an expired object until it is overwritten or removed, and a `304` says nothing of
    /// expiry.
    private func validate(_ key: S3CacheKey, _ entry: S3CacheEntry) throws -> (any ServedBlob)? {
        let question = cache.ask(key)
        defer { cache.finish(question) }
        let answer = try fetch(key, ifNoneMatch: entry.objectETag)
        guard case .notModified = answer else { return try fill(key, answer, asked: question) }
        guard let handle = cache.open(key, entry) else { return nil }
        if cache.hasExpired(handle.metadata) {
            handle.close()
            throw BlobStoreError.notFound(store: key.store, identifier: key.identifier)
        }
        cache.markValidated(key, entry, asked: question)
        cache.countHit(validated: true)
        return handle
    }

    /// The object store's answer; a blob that is gone drops its entry.
    private func fetch(_ key: S3CacheKey, ifNoneMatch objectETag: String?) throws -> S3Fetch {
        let answer: S3Fetch
        do { answer = try backend.fetch(key.identifier, ifNoneMatch: objectETag) } catch BlobStoreError.notFound(let store, let identifier) {
            cache.drop(key)
            throw BlobStoreError.notFound(store: store, identifier: identifier)
        }
        if case .notModified = answer { cache.countAnswer(notModified: true) } else { cache.countAnswer(notModified: false) }
        return answer
    }

    /// Serves a fetched version from a new entry, validated when `question` was asked; a blob too
    /// large to cache, or one the cache could not keep, is read from the backend itself.
    private func fill(_ key: S3CacheKey, _ answer: S3Fetch, asked question: S3CacheQuestion) throws -> any ServedBlob {
        guard case .fetched(let version, let reader) = answer else { return try backend.open(key.identifier) }
        guard cache.admits(version.metadata) else {
            reader.close()
            return try backend.open(key.identifier)
        }
        if let served = try cache.fill(key, version, from: reader, asked: question) { return served }
        return try backend.open(key.identifier)
    }

    package func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        S3CachedUpload(try backend.startUpload(identifier: identifier, options: options), cache: cache, store: name)
    }

    package func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        defer { cache.drop(S3CacheKey(store: name, identifier: identifier)) }
        return try await backend.remove(identifier, condition: condition)
    }

    package func removeAll() async throws {
        defer { cache.dropAll(store: name) }
        try await backend.removeAll()
    }

    package func list(_ query: ListQuery) async throws -> ListPage { try await backend.list(query) }

    package func verify(repair: Bool) async throws -> VerificationReport { try await backend.verify(repair: repair) }

    package func statistics() async throws -> StoreStatistics { try await backend.statistics() }

    package var countsLocally: Bool { backend.countsLocally }

    package func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) { backend.observeChanges(observer) }

    package func policy() async throws -> StorePolicy { try await backend.policy() }

    package func setPolicy(_ policy: StorePolicy) async throws { try await backend.setPolicy(policy) }

    package var memoryTierFigures: MemoryTierStatistics? { backend.memoryTierFigures }
}

/// A put through an ``S3CachedStore``: the blob's entry is dropped once the put has committed,
/// before its writer hears of it.
final class S3CachedUpload: BackendUpload {
    private let upload: any BackendUpload
    private let cache: S3ReadCache
    private let store: String

    init(_ upload: any BackendUpload, cache: S3ReadCache, store: String) {
        self.upload = upload
        self.cache = cache
        self.store = store
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws { try upload.append(bytes) }

    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
        let (cache, store) = (cache, store)
        upload.commit { result in
            if case .success(let metadata) = result { cache.drop(S3CacheKey(store: store, identifier: metadata.identifier)) }
            completion(result)
        }
    }

    func cancel() { upload.cancel() }
}
