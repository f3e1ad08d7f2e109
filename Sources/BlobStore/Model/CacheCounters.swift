/// A store's cache mode as metrics see it: its policy, its usage against the limits, and what
/// eviction and the expiry sweep have removed (``PersistentDataStore/cacheCounters()``,
/// ``InMemoryBlobStore/cacheCounters()``).
public struct CacheCounters: Hashable, Sendable {
    /// The policy in force.
    public var policy: StorePolicy
    /// Unexpired blobs stored; `nil` when the store is not in cache mode (see STORAGE.md).
    public var count: Int?
    /// Their content bytes; `nil` when the store is not in cache mode.
    public var bytes: Int64?
    /// Blobs evicted to keep the store within its limits, since this process opened it.
    public var evicted: UInt64
    /// Expired blobs removed by the sweep, since this process opened it.
    public var expired: UInt64
    /// The most blobs the store held at once since this process opened it (the file store: since its catalog scan finished).
    public var peakCount: Int
    /// The most content bytes the store held at once, counted like ``peakCount``.
    public var peakBytes: Int64
    /// Puts waiting for eviction to make room right now.
    public var waitingPuts: Int

    /// Creates counters.
    public init(
        policy: StorePolicy, count: Int?, bytes: Int64?, evicted: UInt64, expired: UInt64, peakCount: Int, peakBytes: Int64, waitingPuts: Int
    ) {
        self.policy = policy
        self.count = count
        self.bytes = bytes
        self.evicted = evicted
        self.expired = expired
        self.peakCount = peakCount
        self.peakBytes = peakBytes
        self.waitingPuts = waitingPuts
    }
}
