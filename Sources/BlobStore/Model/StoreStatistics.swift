/// Totals for one store.
public struct StoreStatistics: Hashable, Sendable, Codable {
    /// Number of blobs.
    public var count: Int
    /// Sum of the blobs' content sizes in bytes.
    public var bytes: Int64

    /// Creates totals.
    public init(count: Int, bytes: Int64) {
        self.count = count
        self.bytes = bytes
    }
}
