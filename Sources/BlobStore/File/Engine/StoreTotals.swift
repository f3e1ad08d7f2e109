internal import BlobSystem

/// The store's count and bytes once known: `nil` until a scan computed them, then kept current by
/// every commit, and dropped again when something changed the folders behind the engine's back (a
/// repair's moves, a read-only engine adopting a writer's newer map). Its own mutex guards it.
final class StoreTotals: Sendable {
    private let known = Locked<StoreStatistics?>(nil)

    /// The totals, if known.
    var current: StoreStatistics? { known.withLock { $0 } }

    /// Sets them (after a scan that no commit overlapped, or a remove-all).
    func set(_ totals: StoreStatistics) { known.withLock { $0 = totals } }

    /// A commit added `count` blobs and `bytes` bytes (either may be negative); nothing while unknown.
    func adjust(count: Int, bytes: Int64) {
        known.withLock { stats in
            stats?.count += count
            stats?.bytes += bytes
        }
    }

    /// Forgets them, to be counted again.
    func forget() { known.withLock { $0 = nil } }
}
