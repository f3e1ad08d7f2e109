import BlobStore

/// The memory tier's part of `/metrics` (PROTOCOL.md, "Metrics"): per open file store, its tier's
/// counters and occupancy (``BlobStore/MemoryTierStatistics``).
enum MemoryTierMetrics {
    /// The families, in page order: name, type, help, and the figure each store gives.
    static let families: [(name: String, type: String, help: String, value: @Sendable (MemoryTierStatistics) -> Int)] = [
        ("blobstore_memory_tier_hits_total", "counter", "Reads answered from the store's memory tier.", { $0.hits }),
        ("blobstore_memory_tier_misses_total", "counter", "Reads that looked in the memory tier and went to the file.", { $0.misses }),
        ("blobstore_memory_tier_evictions_total", "counter", "Memory tier entries dropped to stay within its budget.", { $0.evictions }),
        ("blobstore_memory_tier_invalidations_total", "counter", "Memory tier entries dropped because their blob changed.", { $0.invalidations }),
        ("blobstore_memory_tier_entries", "gauge", "Blobs in the memory tier.", { $0.entries }),
        ("blobstore_memory_tier_bytes", "gauge", "Bytes the memory tier holds: content plus a per-entry overhead.", { $0.bytes }),
        ("blobstore_memory_tier_budget_bytes", "gauge", "The budget the memory tier draws on, shared by every file store served, in bytes (0: off).", { $0.budgetBytes }),
    ]

    /// Appends every family with one sample per store in `stores`.
    static func render(_ stores: [(name: String, figures: MemoryTierStatistics)], into text: inout String) {
        for family in families {
            text += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n"
            for store in stores { text += "\(family.name){store=\"\(store.name)\"} \(family.value(store.figures))\n" }
        }
    }
}
