internal import BlobSystem

/// The names tests reach the engine's insides by, forwarding to the part that owns each: kept so
/// the tests need not change with the engine's layout. Nothing in the engine uses them.
extension StoreCore {
    /// The index (tests read `confined.map` on the queue).
    var confined: BucketIndex { index }
    /// ``BucketIndex/published``.
    var publishedMap: Locked<BucketMap> { index.published }
    /// ``BucketIndex/location(of:)``. On the queue.
    func locate(_ identifier: String) -> (folder: String, path: String, bucketIndex: Int) { index.location(of: identifier) }
    /// ``BucketIndex/path(of:)``. On the queue.
    func path(of identifier: String) -> String { index.path(of: identifier) }
    /// ``StorePaths/temp``.
    var tempPath: String { paths.temp }

    /// ``StoreTestHooks/queuedReads``.
    var queuedReads: AtomicCounter { hooks.queuedReads }
    /// ``StoreTestHooks/commitLookups``.
    var commitLookups: AtomicCounter { hooks.commitLookups }
    /// ``StoreTestHooks/bucketListings``.
    var bucketListings: Locked<Int> { hooks.bucketListings }
    /// ``StoreTestHooks/commitBatches``.
    var commitBatches: Locked<Int> { hooks.commitBatches }
    /// ``StoreTestHooks/commitSyncs``.
    var commitSyncs: Locked<Int> { hooks.commitSyncs }
    /// ``StoreTestHooks/afterDurableBarrier``.
    var afterDurableBarrier: Locked<(@Sendable () -> Void)?> { hooks.afterDurableBarrier }
    /// ``StoreTestHooks/commitLog``.
    var commitLog: Locked<[CommitEvent]?> { hooks.commitLog }

    /// ``CacheKeeper/sweepNow()``: one sweep round now (tests advance a test clock first).
    func sweepCacheNow() async { await cache.sweepNow() }
    /// ``CacheKeeper/settle()``: the scan done, no eviction round running or due.
    func settleCache() async throws { try await cache.settle() }
    /// ``MemoryTier/holds(_:)``.
    func memoryTierHolds(_ identifier: String) -> Bool { memoryTier.holds(identifier) }

    /// ``CachedReads/works``.
    var cachedReadsWork: AtomicFlag { cachedReads.works }

    /// ``Manifest/read(at:)``.
    static func readManifest(at path: String) throws -> (text: String, map: BucketMap) { try Manifest.read(at: path) }
    /// ``CachedReads/largestInlineRead``.
    static var largestInlineRead: Int64 { CachedReads.largestInlineRead }
    /// ``Repair/escaped(_:)``.
    static func escapedForQuarantine(_ relative: String) -> String { Repair.escaped(relative) }
}
