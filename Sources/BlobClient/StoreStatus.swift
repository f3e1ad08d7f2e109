import BlobStore

/// A store's cache policy and its usage against it, as `GET /v1/stores/{store}` reports them.
public struct StoreStatus: Hashable, Sendable {
    /// The store's name.
    public var name: String
    /// Its blob count and content bytes now.
    public var statistics: StoreStatistics
    /// Its limits and default time to live.
    public var policy: StorePolicy

    /// Creates a status.
    public init(name: String, statistics: StoreStatistics, policy: StorePolicy) {
        self.name = name
        self.statistics = statistics
        self.policy = policy
    }
}
