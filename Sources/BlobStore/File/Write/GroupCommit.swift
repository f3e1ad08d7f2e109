internal import BlobSystem
import Dispatch

/// Mutations queued for the next group commit, and whether some thread is committing.
struct PendingMutations {
    /// A mutation and what to call with its outcome.
    typealias Item = (Mutation, @Sendable (Result<MutationOutcome, any Error>) -> Void)
    var items: [Item] = []
    var draining = false
}

/// The group-commit scheduler: queues every change, and has one committer at a time take everything
/// queued as one batch, make its content durable, apply it (``ChangeApplier``), make its folders
/// durable and acknowledge it (STORAGE.md, "Writing").
///
/// Who commits: the commit thread (`commitQueue`, serial) for every durable batch, since it waits for
/// the disk; a relaxed mutation submitted `inline` on a thread that may block commits its batch
/// right there when no batch is in progress (``submit(_:inline:completion:)``).
///
/// Owned by the store's engine. `pending` holds its own mutex; the committer role (`draining`) passes
/// between threads through it, so one batch at a time is prepared, applied and acknowledged.
final class GroupCommit: Sendable {
    private let commitQueue: DispatchQueue
    private let syncRound: SyncRound
    private let applier: ChangeApplier
    private let broadcaster: ChangeBroadcaster
    private let hooks: StoreTestHooks
    private let pending = Locked(PendingMutations())

    init(commitQueue: DispatchQueue, syncRound: SyncRound, applier: ChangeApplier, broadcaster: ChangeBroadcaster, hooks: StoreTestHooks) {
        self.commitQueue = commitQueue
        self.syncRound = syncRound
        self.applier = applier
        self.broadcaster = broadcaster
        self.hooks = hooks
    }

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
    /// (the I/O queue, a server's loop) — never the Swift concurrency pool — and never from the store queue.
    func submit(
        _ mutation: Mutation, inline: Bool = false, completion: @escaping @Sendable (Result<MutationOutcome, any Error>) -> Void
    ) {
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
    /// folder). The committer role is kept while a batch waits for its folder sync.
    private func drain() {
        dispatchPrecondition(condition: .onQueue(commitQueue))
        var awaiting: CommittedBatch?
        while true {
            let batch = takeBatch(releasingTheRoleWhenEmpty: awaiting == nil)
            if batch.isEmpty {
                guard let previous = awaiting else { return }
                acknowledge(previous, syncFailure: sync(contentOf: [], folders: previous.touched).folders)
                awaiting = nil
                continue
            }
            let prepared = applier.prepare(batch)
            let synced = sync(contentOf: prepared.syncedTemps, folders: awaiting?.touched ?? [])
            if let previous = awaiting { acknowledge(previous, syncFailure: synced.folders) }
            let committed = applier.apply(prepared, contentFailures: synced.content)
            if batch.contains(where: { $0.0.durable }) {
                awaiting = committed
                hooks.afterDurableBarrier.withLock { $0 }?()
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
        let prepared = applier.prepare(batch)
        let committed = applier.apply(prepared, contentFailures: sync(contentOf: prepared.syncedTemps, folders: []).content)
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

    /// Publishes a committed batch's changes and completes its mutations; a durable one that
    /// succeeded fails after all if its folder sync failed.
    private func acknowledge(_ batch: CommittedBatch, syncFailure: (any Error)?) {
        var changes: [(BlobChange.Kind, BlobChange.Reason)] = []
        for result in batch.results {
            switch result {
            case .success(.stored(let metadata)): changes.append((.put(metadata), .requested))
            case .success(.removed(let identifier, true)): changes.append((.removed(identifier: identifier), .requested))
            case .success(.removedAll): changes.append((.removedAll, .requested))
            case .success(.dropped(let identifiers, let reason)): changes += identifiers.map { (.removed(identifier: $0), reason) }
            case .success(.removed(_, false)), .failure: break
            }
        }
        broadcaster.publish(changes)
        if syncFailure == nil { hooks.record(.acknowledged(temps: batch.storedDurableTemps)) }
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
        hooks.commitSyncs.withLock { $0 += 1 }
        let sortedFolders = folders.sorted()
        let failures = syncRound.run(temps.map(SyncTarget.content) + sortedFolders.map(SyncTarget.folder))
        var content: [String: any Error] = [:]
        for path in temps { content[path] = failures[.content(path)] }
        let folderFailure = sortedFolders.lazy.compactMap { failures[.folder($0)] }.first
        hooks.record(.synced(temps: temps.filter { content[$0] == nil }, folders: folderFailure == nil ? sortedFolders : []))
        return (content, folderFailure)
    }
}
