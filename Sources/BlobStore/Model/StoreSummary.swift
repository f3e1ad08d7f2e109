/// A store's name and totals, as listings of stores report them (the daemon's `GET /v1/stores`,
/// `blob stores`).
public struct StoreSummary: Hashable, Sendable, Codable {
    /// The store's name.
    public var name: String
    /// Its blob count and total content size.
    public var statistics: StoreStatistics

    /// Creates a summary.
    public init(name: String, statistics: StoreStatistics) {
        self.name = name
        self.statistics = statistics
    }
}
