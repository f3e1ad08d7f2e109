internal import BlobSystem
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The engine behind one store folder, shared by every ``PersistentDataStore`` opened on it in this
/// process: it owns the store's queues and its parts, and is the one entry to them.
///
/// The parts, each with one job:
/// - the index (``BucketIndex``, `Index/`): bucket map, manifest, splits, recovery at open;
/// - the write path (`Write/`): temp files (``TempBlobWriter``, ``TempFile``), the group-commit
///   scheduler (``GroupCommit``), applying changes (``ChangeApplier``), sync policy and conditions;
/// - the read path (`Read/`): reads on the queue (``ReadPath``), file reads (``BlobReader``), reads
///   from the kernel's caches (``CachedReads``), a read-only engine's following of splits (``ManifestFollower``);
/// - listing and totals (``Listing``, `Listing/`);
/// - verify and repair (``Verifier``, ``Repair``, `Verify/`);
/// - cache mode (``CacheKeeper``, `Policy/`): the policy file, the catalog of sizes and recency,
///   expiry and eviction.
/// The on-disk format they share (a blob file's header, its name, the content check) is `Format/`.
///
/// Queues (who runs what):
/// - `queue` is concurrent: reads run as ordinary work items, side by side; every change is applied
///   inside a `.barrier` item, so no read overlaps it. The index is confined to it (checked).
/// - `commitQueue` is serial: the committer's thread for durable batches (``GroupCommit``).
/// - `ioQueues` write temp files and stream content outside the barrier, at the caller's priority.
/// - `reclaimQueue` frees remove-all's old bucket trees and dropped temp files later, off the
///   acknowledgement path.
/// No blocking call runs on the Swift concurrency pool: async methods hop to these queues with continuations.
///
/// Immutable after its initializer; every part guards its own state.
final class StoreCore: Sendable {
    /// How an engine opens its store.
    enum Mode: Sendable {
        /// Creates what is missing, takes the store's lock and recovers from a crash.
        case writing(bucketCapacity: Int, lockWait: Duration)
        /// Reads a store another process may hold and change (see "Processes" in STORAGE.md):
        /// creates, finishes and removes nothing, takes no lock, commits nothing.
        case readingOnly
    }

    let name: String
    let paths: StorePaths
    /// Whether this engine only reads a store that another process may be changing.
    let readOnly: Bool
    /// Set when opening found that the store's file system refuses `fsync` or `fdatasync` (or failed
    /// one): says what that means for puts. `nil` when both worked (and for a read-only engine).
    let syncWarning: String?

    let queue: DispatchQueue
    let commitQueue: DispatchQueue
    let ioQueues: IOQueues
    let reclaimQueue: DispatchQueue

    let index: BucketIndex
    let reads: ReadPath
    /// Fast path (``CachedReads``).
    let cachedReads: CachedReads
    /// Small hot blobs in memory (``MemoryTier``); stays off (budget 0) for a read-only engine, whose
    /// store another process changes without telling it.
    let memoryTier: MemoryTier
    let writes: GroupCommit
    let listing: Listing
    let verifier: Verifier
    let repairer: Repair
    let broadcaster: ChangeBroadcaster
    let hooks: StoreTestHooks
    /// The order of the article calls made through any ``PersistentDataStore`` on this folder.
    let articleCallOrder = ArticleCallOrder()
    /// Cache mode: policy, expiry, eviction and sweeps (``CacheKeeper``).
    let cache: CacheKeeper
    /// `nil` for a read-only engine, which takes no lock.
    private let lock: FileDescriptor?

    /// Opens the store `name` under `root` as `mode` says. A writing engine creates the store if
    /// needed, takes its lock, finishes an interrupted split and clears the temp files and
    /// unreclaimed versions a crash left behind; it never scans blobs. A read-only engine only reads
    /// the manifest, of a store that must exist.
    init(
        root: String, name: String, mode: Mode, policy: StorePolicy? = nil, clock: StoreClock = .system, sharedMemoryTier: MemoryTierBudget? = nil
    ) throws {
        try StoreName.validate(name)
        let paths = StorePaths(root: root, name: name)
        let label: String
        let map: BucketMap
        let capacity: Int
        var manifestText: String?
        switch mode {
        case .writing(let bucketCapacity, let lockWait):
            let opened = try StoreOpening.openForWriting(root: root, paths: paths, lockWait: lockWait)
            label = "blobstore.\(name)"
            map = opened.map
            capacity = bucketCapacity
            lock = opened.lock
            syncWarning = opened.syncWarning
            readOnly = false
        case .readingOnly:
            let opened = try StoreOpening.openForReading(root: root, paths: paths)
            label = "blobstore.\(name).read-only"
            map = opened.map
            capacity = Int.max
            lock = nil
            syncWarning = nil
            readOnly = true
            manifestText = opened.text
        }
        self.name = name
        self.paths = paths
        // `.default`, the quality of service of `.medium` tasks (the usual callers): see `IOQueues`.
        let queue = DispatchQueue(label: label, qos: .default, attributes: .concurrent)
        let commitQueue = DispatchQueue(label: label + ".commit", qos: .default)
        let reclaimQueue = DispatchQueue(label: label + ".reclaim", qos: .utility)
        let broadcaster = ChangeBroadcaster(store: name)
        let hooks = StoreTestHooks()
        let index = BucketIndex(map: map, paths: paths, capacity: capacity, queue: queue)
        let reader = BlobReader(store: name)
        let listingCache = ListingCache()
        let totals = StoreTotals()
        let follower = manifestText.map {
            ManifestFollower(manifestText: $0, queue: queue, index: index, reader: reader, paths: paths, listingCache: listingCache, totals: totals)
        }
        let cache = CacheKeeper(paths: paths, label: label, clock: clock, readOnly: readOnly)
        let reads = ReadPath(queue: queue, index: index, reader: reader, follower: follower, hooks: hooks, marks: cache.marks)
        let memoryTier = MemoryTier(shared: sharedMemoryTier)
        self.memoryTier = memoryTier
        let applier = ChangeApplier(
            store: name, paths: paths, queue: queue, reclaimQueue: reclaimQueue, index: index, totals: totals, tier: memoryTier, hooks: hooks,
            catalog: cache.catalog, clock: clock)
        let verifier = Verifier(paths: paths, index: index)

        self.cache = cache
        self.queue = queue
        self.commitQueue = commitQueue
        self.reclaimQueue = reclaimQueue
        ioQueues = IOQueues(label: label + ".io")
        self.broadcaster = broadcaster
        self.hooks = hooks
        self.index = index
        self.reads = reads
        cachedReads = CachedReads(paths: paths, store: name, map: index.published, marks: cache.marks)
        writes = GroupCommit(commitQueue: commitQueue, syncRound: SyncRound(label: label), applier: applier, broadcaster: broadcaster, hooks: hooks)
        listing = Listing(store: name, paths: paths, index: index, reads: reads, cache: listingCache, totals: totals, hooks: hooks)
        self.verifier = verifier
        repairer = Repair(
            paths: paths, queue: queue, index: index, verifier: verifier, reads: reads, listingCache: listingCache, totals: totals, tier: memoryTier)

        if !readOnly {
            // Should either fail, the engine is released and its deinitializer gives the lock back.
            try queue.sync(flags: .barrier) { try index.recoverAtOpen() }
            try StoreOpening.sweepLeftovers(paths)
        }
        // Weakly: once the engine is gone (its lock given back) cache mode must commit nothing more.
        try cache.open(
            configured: policy,
            engine: CacheKeeper.Engine(
                storeQueue: queue, index: index,
                submit: { [weak self] mutation, completion in
                    guard let self else { return completion(.failure(CancellationError())) }
                    self.writes.submit(mutation, inline: true, completion: completion)
                }))
    }

    /// ``init(root:name:mode:)`` for writing.
    convenience init(
        root: String, name: String, bucketCapacity: Int, lockWait: Duration = .zero, policy: StorePolicy? = nil, clock: StoreClock = .system,
        sharedMemoryTier: MemoryTierBudget? = nil
    ) throws {
        try self.init(
            root: root, name: name, mode: .writing(bucketCapacity: bucketCapacity, lockWait: lockWait), policy: policy, clock: clock,
            sharedMemoryTier: sharedMemoryTier)
    }

    /// ``init(root:name:mode:)`` for reading only.
    convenience init(readingOnly root: String, name: String, clock: StoreClock = .system) throws {
        try self.init(root: root, name: name, mode: .readingOnly, clock: clock)
    }

    deinit { try? lock?.close() }

    // MARK: - Changes

    /// Queues `mutation` for the committer and waits for its outcome (``GroupCommit/commit(_:)``).
    func commit(_ mutation: Mutation) async throws -> MutationOutcome {
        try refuseIfReadOnly("change")
        return try await withCheckedThrowingContinuation { continuation in
            submit(mutation) { continuation.resume(with: $0) }
        }
    }

    /// Queues `mutation` (``GroupCommit/submit(_:inline:completion:)``). Every change passes here or
    /// through ``commit(_:)``: a read-only engine (no lock) must commit none.
    func submit(
        _ mutation: Mutation, inline: Bool = false, completion: @escaping @Sendable (Result<MutationOutcome, any Error>) -> Void
    ) {
        if readOnly {
            completion(.failure(readOnlyRefusal("change")))
            return
        }
        guard case .put(let put) = mutation else {
            writes.submit(mutation, inline: inline, completion: completion)
            return
        }
        // Cache mode: a put that would take the store too far past its limits waits for eviction.
        cache.admit(size: put.header.size) { [writes, cache] ticket in
            writes.submit(mutation, inline: inline && ticket.immediate) { result in
                cache.settled(ticket)
                completion(result)
            }
        }
    }

    /// Throws for a change asked of a read-only engine: it holds no lock, so it must not write.
    func refuseIfReadOnly(_ operation: String) throws {
        guard readOnly else { return }
        throw readOnlyRefusal(operation)
    }

    /// The error for a change asked of a read-only engine.
    func readOnlyRefusal(_ operation: String) -> BlobStoreError {
        BlobStoreError.io(operation: operation + " (store opened read-only)", path: paths.store, errno: Errno(rawValue: EROFS))
    }

    // MARK: - Listing and integrity

    /// One page of `query` (``Listing``).
    func list(_ query: ListQuery) async throws -> ListPage { try await listing.list(query) }

    /// Count and bytes of the unexpired blobs (``Listing/statistics()``; in cache mode ``CacheKeeper/statistics()``).
    func statistics() async throws -> StoreStatistics {
        if cache.answersStatistics { return try await cache.statistics() }
        return try await listing.statistics()
    }

    /// Checks every blob (``Verifier``); a read-only engine runs again while a split overlapped it.
    func verify() async throws -> VerificationReport {
        try await reads.scanned { try await verifier.verify(reads: reads) }
    }

    /// ``verify()`` that also moves everything wrong into `quarantine/` (``Repair``). Refused read-only.
    func repair() async throws -> VerificationReport {
        try refuseIfReadOnly("repair")
        return try await repairer.run()
    }
}
