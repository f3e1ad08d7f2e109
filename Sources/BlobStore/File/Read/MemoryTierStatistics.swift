/// What a store's memory tier holds and how it has served reads (``PersistentDataStore/memoryTierStatistics``).
///
/// The counters run from the opening of the store's engine (shared by every instance on the same
/// folder in this process) and never go back.
public struct MemoryTierStatistics: Hashable, Sendable {
    /// The most the tier may hold, in charged bytes (0: off).
    public var budgetBytes: Int
    /// Charged bytes held now: content plus a per-entry overhead (STORAGE.md, "Memory tier").
    public var bytes: Int
    /// Blobs held now.
    public var entries: Int
    /// Reads answered from the tier.
    public var hits: Int
    /// Reads that looked in the tier and went to the file.
    public var misses: Int
    /// Versions added after a miss read them.
    public var fills: Int
    /// Entries dropped to stay within the budget.
    public var evictions: Int
    /// Entries dropped because a put, remove, remove-all or repair changed their blob.
    public var invalidations: Int

    /// Creates figures (stores do; applications read them).
    public init(
        budgetBytes: Int, bytes: Int = 0, entries: Int = 0, hits: Int = 0, misses: Int = 0, fills: Int = 0, evictions: Int = 0,
        invalidations: Int = 0
    ) {
        self.budgetBytes = budgetBytes
        self.bytes = bytes
        self.entries = entries
        self.hits = hits
        self.misses = misses
        self.fills = fills
        self.evictions = evictions
        self.invalidations = invalidations
    }
}
