import BlobStore
import BlobSystem

/// Blobs each store lost to its cache policy since the daemon started, counted from the change
/// events the daemon observes (``BlobChange/reason``), for `/metrics`.
///
/// Owns its counts behind a lock: ``record(_:)`` runs on whichever thread commits a change,
/// ``render(limits:cache:)`` on a blocking-work thread.
final class PolicyCounters: Sendable {
    private let counts = Locked<[String: (expired: UInt64, evicted: UInt64)]>([:])

    init() {}

    /// Counts `change` if its store's policy removed a blob.
    func record(_ change: BlobChange) {
        guard case .removed = change.kind, change.reason != .requested else { return }
        counts.withLock { counts in
            var entry = counts[change.store] ?? (0, 0)
            if change.reason == .expired { entry.expired += 1 } else { entry.evicted += 1 }
            counts[change.store] = entry
        }
    }

    /// The metric families: the counters of every store that lost a blob, the limits of the
    /// `limits` stores that have them, and the waiting puts and peak usage of the `cache` stores
    /// (``CacheCounters``: the open stores that have limits).
    func render(limits: [(name: String, policy: StorePolicy)], cache: [(name: String, counters: CacheCounters)]) -> [UInt8] {
        let counts = counts.withLock { $0 }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var text = ""
        func family(_ name: String, _ type: String, _ help: String) { text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        family("blobstore_store_expired_total", "counter", "Blobs removed because they expired, per store, since the daemon started.")
        for (store, count) in counts { text += "blobstore_store_expired_total{store=\"\(store)\"} \(count.expired)\n" }
        family("blobstore_store_evicted_total", "counter", "Blobs evicted to keep a store within its limits, since the daemon started.")
        for (store, count) in counts { text += "blobstore_store_evicted_total{store=\"\(store)\"} \(count.evicted)\n" }
        family("blobstore_store_max_bytes", "gauge", "The byte limit of each open store that has one.")
        for (store, policy) in limits { if let limit = policy.maximumBytes { text += "blobstore_store_max_bytes{store=\"\(store)\"} \(limit)\n" } }
        family("blobstore_store_max_blobs", "gauge", "The blob count limit of each open store that has one.")
        for (store, policy) in limits { if let limit = policy.maximumCount { text += "blobstore_store_max_blobs{store=\"\(store)\"} \(limit)\n" } }
        family("blobstore_store_waiting_puts", "gauge", "Puts waiting for eviction to make room, per open store that has limits.")
        for (store, figures) in cache { text += "blobstore_store_waiting_puts{store=\"\(store)\"} \(figures.waitingPuts)\n" }
        family("blobstore_store_peak_blobs", "gauge", "The most blobs an open store with limits held at once since the daemon opened it.")
        for (store, figures) in cache { text += "blobstore_store_peak_blobs{store=\"\(store)\"} \(figures.peakCount)\n" }
        family("blobstore_store_peak_bytes", "gauge", "The most content bytes an open store with limits held at once since the daemon opened it.")
        for (store, figures) in cache { text += "blobstore_store_peak_bytes{store=\"\(store)\"} \(figures.peakBytes)\n" }
        return Array(text.utf8)
    }
}
