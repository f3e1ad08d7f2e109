import Foundation

/// Cache mode (STORAGE.md, "Cache mode"): the store's policy, and what it has done.
extension PersistentDataStore {
    /// The store's cache policy (``StorePolicy/unlimited`` when it has none). A read-only instance
    /// reads the stored file each time.
    public func policy() async throws -> StorePolicy {
        try await onIO { [core] in try core.cache.policy() }
    }

    /// Stores `policy` with the store (a file written atomically and durably) and applies it at once:
    /// eviction brings the store down to the new limits in the background, and later puts with
    /// ``BlobExpiry/storeDefault`` get the new time to live (stored blobs keep theirs). Refused
    /// read-only (`EROFS`); a negative limit or a time to live that is not positive throws `EINVAL`.
    public func setPolicy(_ policy: StorePolicy) async throws {
        try core.refuseIfReadOnly("set policy")
        try await onIO { [core] in try core.cache.setPolicy(policy) }
    }

    /// Usage against the policy's limits, and the evicted and expired counts, for metrics.
    public func cacheCounters() async throws -> CacheCounters {
        try await core.cache.counters()
    }
}
