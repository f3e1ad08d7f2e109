/// A store's name and totals, as listings of stores report them (the daemon's `GET /v1/stores`,
/// `blob stores`).
public struct StoreSummary: Hashable, Sendable, Codable {
    /// The store's name.
    public var name: String
    /// Its blob count and total content size; `nil` when the lister does not know them (the daemon
    /// reports totals only for the stores it has open).
    public var statistics: StoreStatistics?
    /// The process that holds the store's lock (e.g. `pid 4242`), when the lister knows another
    /// process has the store open.
    public var heldBy: String?

    /// Creates a summary.
    public init(name: String, statistics: StoreStatistics?, heldBy: String? = nil) {
        self.name = name
        self.statistics = statistics
        self.heldBy = heldBy
    }
}
