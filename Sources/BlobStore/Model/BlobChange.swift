import Foundation

/// One committed change to a store, as Core Data posts a change notification.
public struct BlobChange: Hashable, Sendable, Codable {
    /// What happened.
    public enum Kind: Hashable, Sendable, Codable {
        /// A blob was stored; the metadata carries the new ETag.
        case put(BlobMetadata)
        /// A blob was removed.
        case removed(identifier: String)
        /// Every blob of the store was removed.
        case removedAll
    }

    /// Increases by one per change of this store within this process, starting at 1.
    public var sequence: UInt64
    /// The store that changed.
    public var store: String
    /// What happened.
    public var kind: Kind
    /// When it was committed.
    public var date: Date

    /// Creates a change event.
    public init(sequence: UInt64, store: String, kind: Kind, date: Date) {
        self.sequence = sequence
        self.store = store
        self.kind = kind
        self.date = date
    }
}
