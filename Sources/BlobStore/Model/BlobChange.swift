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

    /// Why a blob went: asked for, or the store's cache policy (``StorePolicy``, ``BlobExpiry``).
    public enum Reason: Hashable, Sendable, Codable {
        /// A put, remove or remove-all asked for it.
        case requested
        /// The blob reached its expiry (a ``Kind/removed(identifier:)``).
        case expired
        /// The blob was evicted to keep the store within its limits (a ``Kind/removed(identifier:)``).
        case evicted
    }

    /// Increases by one per change of this store within this process, starting at 1.
    public var sequence: UInt64
    /// The store that changed.
    public var store: String
    /// What happened.
    public var kind: Kind
    /// When it was committed.
    public var date: Date
    /// Why: ``Reason/requested`` except for a removal by the store's cache policy.
    public var reason: Reason

    /// Creates a change event.
    public init(sequence: UInt64, store: String, kind: Kind, date: Date, reason: Reason = .requested) {
        self.sequence = sequence
        self.store = store
        self.kind = kind
        self.date = date
        self.reason = reason
    }
}
