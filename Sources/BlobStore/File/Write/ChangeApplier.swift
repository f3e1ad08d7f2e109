internal import BlobSystem
import Dispatch
import Foundation

/// A batch ready for its barrier.
struct PreparedBatch {
    var items: [PendingMutations.Item]
    var mutations: [Mutation]
    var replaced: [ExistingBlob?]
    var failures: [Int: any Error]
    /// Temp files whose content must be durable before the barrier renames them (``SyncPolicy``).
    var syncedTemps: [String]
}

/// A batch whose barrier has run: its outcomes and the folders it changed.
struct CommittedBatch {
    var items: [PendingMutations.Item]
    var results: [Result<MutationOutcome, any Error>]
    var touched: Set<String>

    /// The temp files of the durable puts that the barrier stored.
    var storedDurableTemps: [String] {
        zip(items, results).compactMap { item, result in
            guard case .put(let put) = item.0, put.durable, case .success = result else { return nil }
            return put.tempPath
        }
    }
}

/// Applying changes: prepares a batch (what each put replaces, its header's `created`, which
/// contents to sync) and applies it in one barrier on the store queue — conditions checked, temp
/// files published, removed blobs unlinked, the index's counts and splits kept, the totals too.
///
/// Called by the committer (``GroupCommit``), one batch at a time. Owned by the store's engine;
/// immutable, and what it changes is the index (in the barrier) and the totals (their own mutex).
final class ChangeApplier: Sendable {
    private let store: String
    private let paths: StorePaths
    private let queue: DispatchQueue
    private let reclaimQueue: DispatchQueue
    private let index: BucketIndex
    private let totals: StoreTotals
    /// Dropped from in the barrier, before and after the files change (``MemoryTier``).
    private let tier: MemoryTier
    private let hooks: StoreTestHooks
    /// Cache mode: what its barriers keep up to date, and the time expiry is judged by.
    private let catalog: CacheCatalog
    private let clock: StoreClock

    init(
        store: String, paths: StorePaths, queue: DispatchQueue, reclaimQueue: DispatchQueue, index: BucketIndex, totals: StoreTotals,
        tier: MemoryTier, hooks: StoreTestHooks, catalog: CacheCatalog, clock: StoreClock
    ) {
        self.catalog = catalog
        self.clock = clock
        self.store = store
        self.paths = paths
        self.queue = queue
        self.reclaimQueue = reclaimQueue
        self.index = index
        self.totals = totals
        self.tier = tier
        self.hooks = hooks
    }

    /// Settles each put's `created` (rewriting its temp header) before its content is synced, so a
    /// durable replacement needs no second sync inside the barrier, and picks the contents to sync.
    func prepare(_ batch: [PendingMutations.Item]) -> PreparedBatch {
        hooks.commitBatches.withLock { $0 += 1 }
        var (mutations, replaced, failures) = settleCreated(batch.map(\.0))
        var syncedTemps: [String] = []
        for position in mutations.indices {
            guard case .put(var put) = mutations[position], failures[position] == nil,
                SyncPolicy.syncsBeforeBarrier(put, replacing: replaced[position])
            else { continue }
            if !put.durable {
                put.contentSynced = true
                mutations[position] = .put(put)
            }
            syncedTemps.append(put.tempPath)
        }
        return PreparedBatch(items: batch, mutations: mutations, replaced: replaced, failures: failures, syncedTemps: syncedTemps)
    }

    /// Applies a batch in one barrier. A put whose content could not be synced fails here, before
    /// its rename: no name ever points at content that may not be on the disk.
    func apply(_ batch: PreparedBatch, contentFailures: [String: any Error]) -> CommittedBatch {
        let mutations = batch.mutations
        let (results, touched, reclaim, dropped) = queue.sync(flags: .barrier) {
            // The memory tier never outlives a change: see `MemoryTier`, "Never stale".
            tier.willChange(mutations)
            defer { tier.didChange(mutations) }
            var touched = Set<String>()
            var reclaim: [String] = []
            var dropped: [TempFile] = []
            let results = mutations.indices.map { position in
                let mutation = mutations[position]
                if case .put(let put) = mutation, let failure = batch.failures[position] ?? contentFailures[put.tempPath] {
                    dropped.append(put.temp)
                    return Result<MutationOutcome, any Error>.failure(failure)
                }
                return Result {
                    try apply(mutation, replacing: batch.replaced[position], touched: &touched, reclaim: &reclaim, dropped: &dropped)
                }
            }
            return (results, touched, reclaim, dropped)
        }
        if !reclaim.isEmpty || !dropped.isEmpty {
            reclaimQueue.async {
                for temp in dropped { temp.drop() }
                for path in reclaim { _ = try? FileSystem.removeTree(path) }
            }
        }
        let committed = CommittedBatch(items: batch.items, results: results, touched: touched)
        hooks.record(.renamed(temps: committed.storedDurableTemps, folders: touched.sorted()))
        return committed
    }

    /// Looks up what each put of a batch replaces and gives its temp header the old version's `created`.
    ///
    /// Runs as a read on the queue before the batch's barrier. What it finds still holds inside that
    /// barrier: only the committer changes the store, and this is the committer. A put whose identifier
    /// an earlier mutation of the same batch touches (or that follows a remove-all) is left to the
    /// barrier, which sees that mutation's effect: `replaced` is nil for it.
    private func settleCreated(_ batch: [Mutation]) -> (mutations: [Mutation], replaced: [ExistingBlob?], failures: [Int: any Error]) {
        var mutations = batch
        var failures: [Int: any Error] = [:]
        let needsLookup = batch.contains { mutation in
            if case .put = mutation { return true }
            return false
        }
        guard needsLookup else { return (mutations, batch.map { _ in nil }, failures) }
        let replaced: [ExistingBlob?] = queue.sync {
            // A put alone in its batch (most of them, unless puts arrive together) has nothing before
            // it to track; its path is built in one allocation, as for a read.
            if batch.count == 1, case .put(let put) = batch[0] {
                return [try? storedVersion(at: index.path(of: put.identifier))]
            }
            var touched = Set<String>()
            var everything = false
            return batch.map { mutation -> ExistingBlob? in
                switch mutation {
                case .removeAll:
                    everything = true
                    return nil
                case .remove(let identifier, _, _):
                    touched.insert(identifier)
                    return nil
                case .drop(let victims, _):
                    for victim in victims { touched.insert(victim.identifier) }
                    return nil
                case .put(let put):
                    guard !everything, touched.insert(put.identifier).inserted else { return nil }
                    // A lookup that fails is left to the barrier, which looks again and reports the error.
                    return try? storedVersion(at: index.path(of: put.identifier))
                }
            }
        }
        for position in batch.indices {
            guard case .put(var put) = batch[position], case .present(let old)? = replaced[position], old.identifier == put.identifier,
                old.createdNanoseconds != put.header.createdNanoseconds, !old.isExpired(atNanoseconds: clock.nowNanoseconds())
            else { continue }
            put.header.createdNanoseconds = old.createdNanoseconds
            do {
                try rewriteHeader(put.header, of: put.temp, durable: false)
                mutations[position] = .put(put)
            } catch {
                failures[position] = error
            }
        }
        return (mutations, replaced, failures)
    }

    /// Applies one mutation; `replaced` is what a put replaces if ``settleCreated(_:)`` found it. A put's
    /// temp file that was not published is added to `dropped`. In the barrier.
    private func apply(
        _ mutation: Mutation, replacing replaced: ExistingBlob?, touched: inout Set<String>, reclaim: inout [String],
        dropped: inout [TempFile]
    ) throws -> MutationOutcome {
        dispatchPrecondition(condition: .onQueueAsBarrier(queue))
        switch mutation {
        case .put(let put):
            do {
                return .stored(try applyPut(put, replacing: replaced, touched: &touched))
            } catch {
                dropped.append(put.temp)
                throw error
            }
        case .remove(let identifier, let condition, _):
            let (folder, path, _) = index.location(of: identifier)
            // An expired blob is absent to a remove: the sweep removes its file, as `.expired`.
            let existing = try storedVersion(at: path).unexpired(atNanoseconds: clock.nowNanoseconds())
            if case .present(let header) = existing, header.identifier != identifier {
                // A different identifier owns this hashed name: ours is absent.
                try condition.check(against: .absent, store: store, identifier: identifier)
                return .removed(identifier: identifier, existed: false)
            }
            try condition.check(against: existing, store: store, identifier: identifier)
            if case .absent = existing { return .removed(identifier: identifier, existed: false) }
            try io("remove", path) { try FileSystem.unlink(path) }
            touched.insert(folder)
            if case .present(let header) = existing { totals.adjust(count: -1, bytes: -header.size) }
            index.adjustCount(bucketAt: index.location(of: identifier).bucketIndex, by: -1)
            catalog.removed(identifier)
            return .removed(identifier: identifier, existed: true)
        case .removeAll:
            let trash = paths.trash + "/" + StorePaths.uniqueName("all-")
            try io("remove all", paths.buckets) {
                try FileSystem.rename(paths.buckets, to: trash)
                try FileSystem.makeDirectory(paths.buckets)
                try FileSystem.makeDirectory(paths.bucket(1))
            }
            reclaim.append(trash)
            // Synced whatever the mode: a later durable put syncs only its bucket folder, whose own
            // entry must be durable already. The manifest's write syncs the store folder (the new `b/`).
            try io("sync folder", paths.buckets) { try FileSystem.syncDirectory(paths.buckets) }
            try index.reset()
            totals.set(StoreStatistics(count: 0, bytes: 0))
            catalog.clear()
            return .removedAll
        case .drop(let victims, let reason):
            var removed: [String] = []
            for victim in victims where try drop(victim, reason: reason, touched: &touched) { removed.append(victim.identifier) }
            return .dropped(identifiers: removed, reason: reason)
        }
    }

    /// Removes `victim` for cache mode if it is still the stored version (and still expired, for an
    /// expiry): the same unlink, counts and catalog update as a remove, in the same barrier kind.
    /// Whether it removed `victim`.
    ///
    /// The version is checked against the catalog, not the file: every barrier that changes a file
    /// also updates the catalog, so in a barrier the catalog's version of an identifier is the one
    /// stored, and reading the header back (an open, a read and a close per victim) would only tell
    /// the same. What the catalog cannot see is a file removed behind its back (a repair moved it
    /// aside): the unlink then finds nothing, and the catalog forgets that version.
    private func drop(_ victim: CacheVictim, reason: BlobChange.Reason, touched: inout Set<String>) throws -> Bool {
        let now = reason == .expired ? clock.nowNanoseconds() : nil
        guard let size = catalog.holds(victim, expiredAt: now) else { return false }
        let (folder, path, bucketIndex) = index.location(of: victim.identifier)
        guard try io("remove", path, { try FileSystem.unlinkIfExists(path) }) else {
            catalog.forget(victim)
            return false
        }
        touched.insert(folder)
        totals.adjust(count: -1, bytes: -size)
        index.adjustCount(bucketAt: bucketIndex, by: -1)
        catalog.removed(victim.identifier)
        catalog.dropped(reason: reason)
        return true
    }

    /// What is stored at `path`, for a commit (counted in ``StoreTestHooks/commitLookups``).
    private func storedVersion(at path: String) throws -> ExistingBlob {
        hooks.commitLookups.wrappingAdd(1, ordering: .relaxed)
        return try BlobReader.existing(at: path)
    }

    private func applyPut(_ put: PreparedPut, replacing replaced: ExistingBlob?, touched: inout Set<String>) throws -> BlobMetadata {
        // Located again: a split earlier in this barrier may have moved the bucket boundary.
        let (folder, path, bucketIndex) = index.location(of: put.identifier)
        let found = try replaced ?? storedVersion(at: path)
        var existing = found
        if case .present(let header) = existing, header.identifier != put.identifier {
            throw BlobStoreError.corrupt(
                path: path, reason: "identifier '\(BlobStoreError.abbreviated(put.identifier))' collides with '\(BlobStoreError.abbreviated(header.identifier))' on its hashed file name")
        }
        if case .damaged = existing { existing = .absent }
        // An expired version is absent to the condition and to `created`, but its file and counts are replaced.
        let current = existing.unexpired(atNanoseconds: clock.nowNanoseconds())
        try put.condition.check(against: current, store: store, identifier: put.identifier)
        var header = put.header
        let created: Int64
        if case .present(let old) = current { created = old.createdNanoseconds } else { created = header.modifiedNanoseconds }
        if created != header.createdNanoseconds {
            // Only for a put that ``settleCreated(_:)`` left to the barrier (an earlier mutation of its
            // batch touched the same blob): correct `created` in the temp file now.
            header.createdNanoseconds = created
            try rewriteHeader(header, of: put.temp, durable: put.durable)
        }
        if SyncPolicy.syncsInBarrier(put, found: found) {
            try io("sync", put.temp.path) { try put.temp.withWritableDescriptor { fd in try fd.dataSync() } }
        }
        try io("rename", path) { try put.temp.publish(replacing: path) }
        touched.insert(folder)
        if case .present(let old) = existing {
            totals.adjust(count: 0, bytes: header.size - old.size)
        } else {
            try added(put.identifier, bucketAt: bucketIndex, size: header.size, touched: &touched)
        }
        catalog.stored(header)
        return header.metadata
    }

    /// Counts a blob new to the bucket at `bucketIndex` in the totals and the index (which may split the bucket).
    private func added(_ identifier: String, bucketAt bucketIndex: Int, size: Int64, touched: inout Set<String>) throws {
        totals.adjust(count: 1, bytes: size)
        try index.added(identifier, bucketAt: bucketIndex, touched: &touched)
    }

    private func rewriteHeader(_ header: BlobHeader, of temp: TempFile, durable: Bool) throws {
        try io("write", temp.path) {
            try temp.withWritableDescriptor { fd in
                try header.encoded().withUnsafeBytes { raw in try fd.writeAll(toAbsoluteOffset: 0, raw) }
                if durable { try fd.dataSync() }
            }
        }
    }
}
