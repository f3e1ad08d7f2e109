/// A store's cache policy, kept with the store: limits that eviction keeps it under, and how long its
/// blobs live when a put does not say (``BlobExpiry``). Every field `nil` means no limit.
public struct StorePolicy: Hashable, Sendable {
    /// Content bytes the store may hold; over it, the least recently used blobs are evicted.
    public var maximumBytes: Int64?
    /// Blobs the store may hold; over it, the least recently used blobs are evicted.
    public var maximumCount: Int?
    /// How long a blob lives after its put when the put asked for ``BlobExpiry/storeDefault``.
    public var defaultTimeToLive: Duration?

    /// Creates a policy; every parameter defaults to "no limit".
    public init(maximumBytes: Int64? = nil, maximumCount: Int? = nil, defaultTimeToLive: Duration? = nil) {
        self.maximumBytes = maximumBytes
        self.maximumCount = maximumCount
        self.defaultTimeToLive = defaultTimeToLive
    }

    /// No limits and no expiry: a store as it was before cache mode.
    public static let unlimited = StorePolicy()
}
