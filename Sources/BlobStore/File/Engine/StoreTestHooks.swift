internal import BlobSystem
import Synchronization

/// Every counter and hook the engine keeps for tests and observability, in one place: the parts
/// count into it and call its hooks, and nothing in the engine reads them back to decide anything.
///
/// Each member holds its own lock or is atomic, so any thread may touch it.
final class StoreTestHooks: Sendable {
    /// How many times a commit read the stored version of a blob it changes.
    let commitLookups = AtomicCounter()
    /// How many reads went through the store queue rather than being served from the kernel's caches.
    let queuedReads = AtomicCounter()
    /// How many times a bucket folder was read and sorted for a listing.
    let bucketListings = Locked(0)
    /// How many group commits have run.
    let commitBatches = Locked(0)
    /// How many times commits waited for the disk: rounds of syncs made side by side (``SyncRound``),
    /// one per round however many files it syncs.
    let commitSyncs = Locked(0)
    /// Called on the commit thread after the barrier of a durable batch, before its folder sync.
    let afterDurableBarrier = Locked<(@Sendable () -> Void)?>(nil)
    /// While not nil, commits append what they do, in order, so a test can check the durability
    /// protocol (content synced before its rename, folder synced before the acknowledgement).
    let commitLog = Locked<[CommitEvent]?>(nil)

    /// Appends to ``commitLog`` when a test records.
    func record(_ event: @autoclosure () -> CommitEvent) {
        commitLog.withLock { log in
            if log != nil { log!.append(event()) }
        }
    }
}
