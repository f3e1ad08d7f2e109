internal import BlobSystem
import Dispatch
import Foundation

/// A change waiting for the committer.
enum Mutation: Sendable {
    case put(PreparedPut)
    case remove(identifier: String, condition: WriteCondition, durable: Bool)
    case removeAll(durable: Bool)

    var durable: Bool {
        switch self {
        case .put(let put): return put.durable
        case .remove(_, _, let durable), .removeAll(let durable): return durable
        }
    }
}

/// What a committed mutation did.
enum MutationOutcome: Sendable {
    case stored(BlobMetadata)
    case removed(identifier: String, existed: Bool)
    case removedAll
}

extension Result where Success == MutationOutcome {
    /// The metadata of a committed put.
    func storedMetadata() throws -> BlobMetadata {
        guard case .stored(let metadata) = try get() else { preconditionFailure("a put commits to .stored") }
        return metadata
    }
}

/// One step of a commit, as recorded in `StoreCore.commitLog` (tests). Puts are named by their temp file.
enum CommitEvent: Equatable, Sendable {
    /// A round of syncs made durable the content of `temps` and the entries of `folders` (only those that succeeded).
    case synced(temps: [String], folders: [String])
    /// A barrier renamed the temp files of these durable puts into place, touching `folders`.
    case renamed(temps: [String], folders: [String])
    /// These durable puts were reported as successes.
    case acknowledged(temps: [String])
}

/// Mutations queued for the next group commit. Owned by `StoreCore.pending`'s mutex.
struct PendingMutations {
    /// A mutation and what to call with its outcome.
    typealias Item = (Mutation, @Sendable (Result<MutationOutcome, any Error>) -> Void)
    var items: [Item] = []
    var draining = false
}

extension StoreCore {
    /// Queues `mutation` for the committer and waits for its outcome.
    func commit(_ mutation: Mutation) async throws -> MutationOutcome {
        try await withCheckedThrowingContinuation { continuation in
            submit(mutation) { continuation.resume(with: $0) }
        }
    }

    /// Queues `mutation`; `completion` runs once it is committed (and synced, if durable) or has failed.
    ///
    /// With `inline`, a relaxed mutation that finds no batch being committed is committed on the calling thread
    /// (a barrier of renames, no disk wait), and `completion` runs there before this returns:
    /// handing it to the commit thread and back would cost two thread wake-ups, more than the
    /// commit itself. Whatever queued meanwhile goes to the commit thread. A durable mutation always
    /// goes to the commit thread, because its batch waits for the disk, which must not stall a
    /// caller such as a server's event loop. Only threads that may block on disk I/O pass `inline`
    /// (the I/O queue, a server's loop) — never the Swift concurrency pool — and never from `queue`.
    func submit(
        _ mutation: Mutation, inline: Bool = false, completion: @escaping @Sendable (Result<MutationOutcome, any Error>) -> Void
    ) {
        // Every change passes here: a read-only engine (no lock) must commit none.
        if readOnly {
            completion(.failure(readOnlyRefusal("change")))
            return
        }
        guard enqueue(mutation, completion) else { return }
        if mutation.durable || !inline {
            commitQueue.async { self.drain() }
        } else if drainBatch() {
            commitQueue.async { self.drain() }
        }
    }

    /// Adds a mutation to the queue; returns whether the caller must start draining.
    private func enqueue(_ mutation: Mutation, _ completion: @escaping @Sendable (Result<MutationOutcome, any Error>) -> Void) -> Bool {
        pending.withLock { state in
            state.items.append((mutation, completion))
            defer { state.draining = true }
            return !state.draining
        }
    }

    /// The committer on the commit thread: group commit, pipelined.
    ///
    /// Each turn takes everything queued as one batch and makes **one round** of syncs, side by side
    /// (``SyncRound``), that covers both this batch's content (before its renames) and the previous
    /// batch's folders (after its renames), then acknowledges the previous batch and applies this one
    /// in one barrier. Without the overlap every batch waited for two rounds in turn; under load this
    /// halves the waits per batch, and a lone put still waits for exactly its two (content, then
    /// folder). The committer role is kept while a batch waits for its folder sync. Runs on `commitQueue`.
    private func drain() {
        var awaiting: CommittedBatch?
        while true {
            let batch = takeBatch(releasingTheRoleWhenEmpty: awaiting == nil)
            if batch.isEmpty {
                guard let previous = awaiting else { return }
                acknowledge(previous, syncFailure: sync(contentOf: [], folders: previous.touched).folders)
                awaiting = nil
                continue
            }
            let prepared = prepare(batch)
            let synced = sync(contentOf: prepared.syncedTemps, folders: awaiting?.touched ?? [])
            if let previous = awaiting { acknowledge(previous, syncFailure: synced.folders) }
            let committed = apply(prepared, contentFailures: synced.content)
            if batch.contains(where: { $0.0.durable }) {
                awaiting = committed
                afterDurableBarrier.withLock { $0 }?()
            } else {
                acknowledge(committed, syncFailure: nil)
                awaiting = nil
            }
        }
    }

    /// Commits one batch on the calling thread, folder sync included (the inline path of ``submit(_:inline:completion:)``);
    /// returns whether more mutations are waiting (the caller must see that they get committed).
    private func drainBatch() -> Bool {
        let batch = takeBatch(releasingTheRoleWhenEmpty: true)
        if batch.isEmpty { return false }  // the role is released already
        let prepared = prepare(batch)
        let committed = apply(prepared, contentFailures: sync(contentOf: prepared.syncedTemps, folders: []).content)
        let durable = batch.contains(where: { $0.0.durable })
        acknowledge(committed, syncFailure: durable ? sync(contentOf: [], folders: committed.touched).folders : nil)
        // Release the committer role only when nothing is waiting; otherwise the caller continues.
        return pending.withLock { state in
            if state.items.isEmpty {
                state.draining = false
                return false
            }
            return true
        }
    }

    /// Everything queued so far. When there is nothing and `releasingTheRoleWhenEmpty`, the caller
    /// stops being the committer (the next submit starts a new one).
    private func takeBatch(releasingTheRoleWhenEmpty release: Bool) -> [PendingMutations.Item] {
        pending.withLock { state in
            let items = state.items
            state.items = []
            if items.isEmpty && release { state.draining = false }
            return items
        }
    }

    /// A batch ready for its barrier.
    private struct PreparedBatch {
        var items: [PendingMutations.Item]
        var mutations: [Mutation]
        var replaced: [ExistingBlob?]
        var failures: [Int: any Error]
        /// Temp files whose content must be durable before the barrier renames them: every durable
        /// put's, and a relaxed put's known to replace a blob (a named file; see ``applyPut(_:replacing:touched:reclaim:)``).
        var syncedTemps: [String]
    }

    /// A batch whose barrier has run: its outcomes and the folders it changed.
    private struct CommittedBatch {
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

    /// Appends to ``commitLog`` when a test records.
    private func record(_ event: @autoclosure () -> CommitEvent) {
        commitLog.withLock { log in
            if log != nil { log!.append(event()) }
        }
    }

    private func prepare(_ batch: [PendingMutations.Item]) -> PreparedBatch {
        commitBatches.withLock { $0 += 1 }
        // Each put's `created` is settled (and its temp header rewritten) before its content is
        // synced, so a durable replacement needs no second sync inside the barrier.
        var (mutations, replaced, failures) = settleCreated(batch.map(\.0))
        var syncedTemps: [String] = []
        for index in mutations.indices {
            guard case .put(var put) = mutations[index], failures[index] == nil else { continue }
            if case .present? = replaced[index], !put.durable, !put.temp.isAnonymous {
                put.contentSynced = true
                mutations[index] = .put(put)
            } else if !put.durable {
                continue
            }
            syncedTemps.append(put.tempPath)
        }
        return PreparedBatch(items: batch, mutations: mutations, replaced: replaced, failures: failures, syncedTemps: syncedTemps)
    }

    /// Applies a batch in one barrier. A put whose content could not be synced fails here, before
    /// its rename: no name ever points at content that may not be on the disk.
    private func apply(_ batch: PreparedBatch, contentFailures: [String: any Error]) -> CommittedBatch {
        let mutations = batch.mutations
        let (results, touched, reclaim, dropped) = queue.sync(flags: .barrier) {
            var touched = Set<String>()
            var reclaim: [String] = []
            var dropped: [TempFile] = []
            let results = mutations.indices.map { index in
                let mutation = mutations[index]
                if case .put(let put) = mutation, let failure = batch.failures[index] ?? contentFailures[put.tempPath] {
                    dropped.append(put.temp)
                    return Result<MutationOutcome, any Error>.failure(failure)
                }
                return Result {
                    try apply(mutation, replacing: batch.replaced[index], touched: &touched, reclaim: &reclaim, dropped: &dropped)
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
        record(.renamed(temps: committed.storedDurableTemps, folders: touched.sorted()))
        return committed
    }

    /// Publishes a committed batch's changes and completes its mutations; a durable one that
    /// succeeded fails after all if its folder sync failed.
    private func acknowledge(_ batch: CommittedBatch, syncFailure: (any Error)?) {
        var changes: [BlobChange.Kind] = []
        for result in batch.results {
            switch result {
            case .success(.stored(let metadata)): changes.append(.put(metadata))
            case .success(.removed(let identifier, true)): changes.append(.removed(identifier: identifier))
            case .success(.removedAll): changes.append(.removedAll)
            case .success(.removed(_, false)), .failure: break
            }
        }
        broadcaster.publish(changes)
        if syncFailure == nil { record(.acknowledged(temps: batch.storedDurableTemps)) }
        for (item, result) in zip(batch.items, batch.results) {
            if let syncFailure, item.0.durable, case .success = result {
                item.1(.failure(syncFailure))
            } else {
                item.1(result)
            }
        }
    }

    /// One round of syncs (see ``SyncRound``) that makes the content of `temps` and the entries of
    /// `folders` durable. Returns the error of each temp file whose sync failed, and the first
    /// folder error (a batch's folders are acknowledged together).
    private func sync(contentOf temps: [String], folders: Set<String>) -> (content: [String: any Error], folders: (any Error)?) {
        if temps.isEmpty && folders.isEmpty { return ([:], nil) }
        commitSyncs.withLock { $0 += 1 }
        let sortedFolders = folders.sorted()
        let failures = syncRound.run(temps.map(SyncTarget.content) + sortedFolders.map(SyncTarget.folder))
        var content: [String: any Error] = [:]
        for path in temps { content[path] = failures[.content(path)] }
        let folderFailure = sortedFolders.lazy.compactMap { failures[.folder($0)] }.first
        record(.synced(temps: temps.filter { content[$0] == nil }, folders: folderFailure == nil ? sortedFolders : []))
        return (content, folderFailure)
    }

    /// Looks up what each put of a batch replaces (each durable or `ifMatch` put: the others claim their
    /// name first) and gives its temp header the old version's `created`.
    ///
    /// Runs as a read on `queue` before the batch's barrier. What it finds still holds inside that
    /// barrier: only the committer changes the store, and this is the committer. A put whose identifier
    /// an earlier mutation of the same batch touches (or that follows a remove-all) is left to the
    /// barrier, which sees that mutation's effect: `replaced` is nil for it. So is a relaxed put that
    /// may create its blob (``claimsNameFirst(_:)``): it tries to claim a new name before anything is
    /// looked up, and only a name that exists costs a lookup, in the barrier.
    private func settleCreated(_ batch: [Mutation]) -> (mutations: [Mutation], replaced: [ExistingBlob?], failures: [Int: any Error]) {
        var mutations = batch
        var failures: [Int: any Error] = [:]
        let needsLookup = batch.contains { mutation in
            if case .put(let put) = mutation { return !claimsNameFirst(put) }
            return false
        }
        guard needsLookup else { return (mutations, batch.map { _ in nil }, failures) }
        let replaced: [ExistingBlob?] = queue.sync {
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
                case .put(let put):
                    guard !everything, touched.insert(put.identifier).inserted, !claimsNameFirst(put) else { return nil }
                    // A lookup that fails is left to the barrier, which looks again and reports the error.
                    return try? storedVersion(at: locate(put.identifier).path)
                }
            }
        }
        for index in batch.indices {
            guard case .put(var put) = batch[index], case .present(let old)? = replaced[index], old.identifier == put.identifier,
                old.createdNanoseconds != put.header.createdNanoseconds
            else { continue }
            put.header.createdNanoseconds = old.createdNanoseconds
            do {
                try rewriteHeader(put.header, of: put.temp, durable: false)
                mutations[index] = .put(put)
            } catch {
                failures[index] = error
            }
        }
        return (mutations, replaced, failures)
    }

    /// Checks a write condition against what is stored.
    func check(_ condition: WriteCondition, against existing: ExistingBlob, identifier: String) throws {
        let current: ETag?
        if case .present(let header) = existing { current = ETag(checksum: header.checksum) } else { current = nil }
        switch condition {
        case .none:
            return
        case .ifNoneMatch:
            // A damaged or misplaced file is no version of this blob: a put replaces it.
            if case .present = existing {} else { return }
            throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: nil, actual: current)
        case .ifMatch(let expected):
            if current == expected { return }
            throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: expected, actual: current)
        }
    }

    /// Applies one mutation; `replaced` is what a put replaces if ``settleCreated(_:)`` found it. A put's
    /// temp file is ended here if it was published, or added to `dropped`. Runs inside the barrier.
    private func apply(
        _ mutation: Mutation, replacing replaced: ExistingBlob?, touched: inout Set<String>, reclaim: inout [String],
        dropped: inout [TempFile]
    ) throws -> MutationOutcome {
        switch mutation {
        case .put(let put):
            do {
                let metadata = try applyPut(put, replacing: replaced, touched: &touched, reclaim: &reclaim)
                put.temp.published()
                return .stored(metadata)
            } catch {
                dropped.append(put.temp)
                throw error
            }
        case .remove(let identifier, let condition, _):
            let (folder, path, _) = locate(identifier)
            let existing = try storedVersion(at: path)
            if case .present(let header) = existing, header.identifier != identifier {
                // A different identifier owns this hashed name: ours is absent.
                try check(condition, against: .absent, identifier: identifier)
                return .removed(identifier: identifier, existed: false)
            }
            try check(condition, against: existing, identifier: identifier)
            if case .absent = existing { return .removed(identifier: identifier, existed: false) }
            let trash = trashPath + "/" + StoreCore.uniqueName("rm-")
            try io("remove", path) { try FileSystem.rename(path, to: trash) }
            reclaim.append(trash)
            touched.insert(folder)
            if case .present(let header) = existing { adjustStatistics(count: -1, bytes: -header.size) }
            adjustCount(bucketAt: locate(identifier).bucketIndex, by: -1)
            return .removed(identifier: identifier, existed: true)
        case .removeAll:
            let trash = trashPath + "/" + StoreCore.uniqueName("all-")
            try io("remove all", bucketsPath) {
                try FileSystem.rename(bucketsPath, to: trash)
                try FileSystem.makeDirectory(bucketsPath)
                try FileSystem.makeDirectory(bucketPath(1))
            }
            reclaim.append(trash)
            // Synced whatever the mode: a later durable put syncs only its bucket folder, whose own
            // entry must be durable already. The manifest's write syncs the store folder (the new `b/`).
            try io("sync folder", bucketsPath) { try FileSystem.syncDirectory(bucketsPath) }
            confined.map = .initial
            confined.counts = [1: 0]
            try writeManifest(confined.map)
            statistics.withLock { $0 = StoreStatistics(count: 0, bytes: 0) }
            return .removedAll
        }
    }

    /// What is stored at `path`, for a commit (counted in ``commitLookups``).
    private func storedVersion(at path: String) throws -> ExistingBlob {
        commitLookups.wrappingAdd(1, ordering: .relaxed)
        return try existingBlob(at: path)
    }

    /// Whether `put` first tries to claim its name with a link or rename that fails if the name exists, instead
    /// of looking the name up before the barrier: a relaxed put that may create its blob. Most puts name
    /// a new blob, and a lookup of an absent name in a large bucket folder costs about as much as the
    /// rename. A durable put looks up first, because its header's `created` must be final before its
    /// content is synced; a put with an `ifMatch` condition needs the current version.
    func claimsNameFirst(_ put: PreparedPut) -> Bool {
        guard !put.durable, put.temp.isAnonymous || noReplaceRenames.load(ordering: .relaxed) else { return false }
        switch put.condition {
        case .none, .ifNoneMatch: return true
        case .ifMatch: return false
        }
    }

    private func applyPut(_ put: PreparedPut, replacing replaced: ExistingBlob?, touched: inout Set<String>, reclaim: inout [String]) throws
        -> BlobMetadata
    {
        // Located again: a split earlier in this barrier may have moved the bucket boundary.
        let (folder, path, bucketIndex) = locate(put.identifier)
        if replaced == nil, claimsNameFirst(put) {
            var claimed = false
            do throws(Errno) {
                try put.temp.publishNew(as: path)
                claimed = true
            } catch where error.rawValue == EEXIST {
                // The name exists: look it up below, as any replacement does.
            } catch where !put.temp.isAnonymous && (error.rawValue == EINVAL || error.rawValue == ENOSYS) {
                noReplaceRenames.store(false, ordering: .relaxed)  // this filesystem cannot; look up first from now on
            } catch {
                throw BlobStoreError.io(operation: put.temp.isAnonymous ? "link" : "rename", path: path, errno: error)
            }
            if claimed {
                // A new blob: its header's `created` is its `modified` already.
                touched.insert(folder)
                try addedBlob(put.identifier, bucketAt: bucketIndex, size: put.header.size, touched: &touched)
                return put.header.metadata
            }
        }
        let found = try replaced ?? storedVersion(at: path)
        var existing = found
        if case .present(let header) = existing, header.identifier != put.identifier {
            throw BlobStoreError.corrupt(
                path: path, reason: "identifier '\(BlobStoreError.abbreviated(put.identifier))' collides with '\(BlobStoreError.abbreviated(header.identifier))' on its hashed file name")
        }
        if case .damaged = existing { existing = .absent }
        try check(put.condition, against: existing, identifier: put.identifier)
        var header = put.header
        let created: Int64
        if case .present(let old) = existing { created = old.createdNanoseconds } else { created = header.modifiedNanoseconds }
        if created != header.createdNanoseconds {
            // Only for a put that ``settleCreated(_:)`` left to the barrier (an earlier mutation of its
            // batch touched the same blob): correct `created` in the temp file now.
            header.createdNanoseconds = created
            try rewriteHeader(header, of: put.temp, durable: put.durable)
        }
        if case .absent = found {} else if !put.durable && !put.contentSynced {
            // A relaxed put that replaces a blob syncs its content before the rename: a file system
            // may persist the rename before the data (ext4's delayed allocation does for a new name),
            // and a power cut would then trade a version that was on the disk for an empty file. Here
            // in the barrier only when the replacement was found here (a put that claims its name first).
            try io("sync", put.temp.location) { try put.temp.withWritableDescriptor { fd in try fd.dataSync() } }
        }
        if case .absent = found {} else {
            // Keep the old version linked so the rename does not free its blocks (a synchronous TRIM here).
            let trash = trashPath + "/" + StoreCore.uniqueName("old-")
            if (try? FileSystem.link(path, as: trash)) != nil { reclaim.append(trash) }
        }
        if case .absent = found, put.temp.isAnonymous {
            // Checked absent in this barrier (a store that looks up first): a link cannot replace anything.
            try io("link", path) { try put.temp.publishNew(as: path) }
        } else {
            try io("rename", path) { try put.temp.publish(replacing: path) }
        }
        touched.insert(folder)
        if case .present(let old) = existing {
            adjustStatistics(count: 0, bytes: header.size - old.size)
        } else {
            try addedBlob(put.identifier, bucketAt: bucketIndex, size: header.size, touched: &touched)
        }
        return header.metadata
    }

    /// Counts `identifier`, a blob new to the bucket at `bucketIndex`, and splits the bucket if it is now over capacity.
    private func addedBlob(_ identifier: String, bucketAt bucketIndex: Int, size: Int64, touched: inout Set<String>) throws {
        adjustStatistics(count: 1, bytes: size)
        adjustCount(bucketAt: bucketIndex, by: 1)
        if let count = confined.counts[confined.map.buckets[bucketIndex].number], count > bucketCapacity {
            try split(bucketAt: bucketIndex, after: identifier, touched: &touched)
        }
    }

    private func rewriteHeader(_ header: BlobHeader, of temp: TempFile, durable: Bool) throws {
        try io("write", temp.location) {
            try temp.withWritableDescriptor { fd in
                try header.encoded().withUnsafeBytes { raw in try fd.writeAll(toAbsoluteOffset: 0, raw) }
                if durable { try fd.dataSync() }
            }
        }
    }

    private func adjustStatistics(count: Int, bytes: Int64) {
        statistics.withLock { stats in
            stats?.count += count
            stats?.bytes += bytes
        }
    }

    /// Keeps the bucket's blob count, learning it from the folder the first time it is needed.
    private func adjustCount(bucketAt index: Int, by delta: Int) {
        let number = confined.map.buckets[index].number
        confined.bucketChanged(number)
        if let count = confined.counts[number] {
            confined.counts[number] = count + delta
        } else if let names = try? DirectoryStream.entries(of: bucketPath(number)) {
            confined.counts[number] = names.count  // already includes this change
        }
    }

    // MARK: - Splitting buckets

    /// Splits the bucket at `index`, over capacity since `added` was put into it, in two. Runs inside the barrier.
    ///
    /// Where: when `added` is the bucket's largest identifier, the identifiers are most likely
    /// ascending (counters, timestamps, names numbered in order), and every later one will land above
    /// it too; the bucket is then cut just below `added`, which alone moves, so the full lower bucket
    /// is never touched again (a B-tree's rightmost split). Otherwise ``BucketMap/cutIndex(count:median:)``.
    ///
    /// Crash-safe: the manifest records the split as pending before any file moves, so an
    /// interrupted split is finished when the store next opens.
    private func split(bucketAt index: Int, after added: String, touched: inout Set<String>) throws {
        let old = confined.map.buckets[index]
        let entries = try entries(ofBucketFolder: bucketPath(old.number))
        guard entries.count >= 2 else { return }
        let cut =
            entries[entries.count - 1].identifier.elementsEqual(added.utf8)
            ? entries.count - 1
            : BucketMap.cutIndex(count: entries.count, median: entries[entries.count / 2].identifier)
        let bound = entries[cut].identifier
        var map = confined.map
        let new = map.split(bucketAt: index, at: bound)
        _ = try io("create folder", bucketPath(new.number)) { try FileSystem.makeDirectory(bucketPath(new.number)) }
        // The new folder's entry is durable before any blob moves into it (a folder's `fsync` does
        // not make its own name durable).
        try io("sync folder", bucketsPath) { try FileSystem.syncDirectory(bucketsPath) }
        try writeManifest(map)
        confined.map = map
        try finishSplit()
        touched.insert(bucketPath(old.number))
        touched.insert(bucketPath(new.number))
    }

    /// Moves every blob that belongs to the pending split's new bucket there, then clears the pending mark.
    func finishSplit() throws {
        guard let split = confined.map.pendingSplit,
            let newIndex = confined.map.buckets.firstIndex(where: { $0.number == split.newBucket })
        else {
            confined.map.pendingSplit = nil
            return
        }
        let bound = confined.map.buckets[newIndex].lowerBound
        let from = bucketPath(split.fromBucket), to = bucketPath(split.newBucket)
        confined.bucketChanged(split.fromBucket)
        confined.bucketChanged(split.newBucket)
        let entries = try entries(ofBucketFolder: from)
        var moved = 0
        for entry in entries where !entry.identifier.lexicographicallyPrecedes(bound) {
            try io("move", from + "/" + entry.fileName) {
                try FileSystem.rename(from + "/" + entry.fileName, to: to + "/" + entry.fileName)
            }
            moved += 1
        }
        // The new names first: a crash between the two syncs leaves a moved blob in both folders (the
        // next open finishes the split), never in neither.
        try io("sync folder", to) { try FileSystem.syncDirectory(to) }
        try io("sync folder", from) { try FileSystem.syncDirectory(from) }
        confined.map.pendingSplit = nil
        try writeManifest(confined.map)
        let movedTotal = moved
        if let count = confined.counts[split.fromBucket] {
            confined.counts[split.fromBucket] = count - movedTotal
        }
        confined.counts[split.newBucket] = (try? DirectoryStream.entries(of: to).count) ?? movedTotal
    }
}
