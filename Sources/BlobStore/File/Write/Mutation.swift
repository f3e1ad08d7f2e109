internal import BlobSystem
import Dispatch
import Foundation

/// A change waiting for the committer.
enum Mutation: Sendable {
    case put(PreparedPut)
    case remove(identifier: String, condition: WriteCondition, durable: Bool)
    case removeAll(durable: Bool)
    /// Cache mode removing blobs (``CacheKeeper``), a round's worth in one mutation: `reason` is
    /// ``BlobChange/Reason/evicted`` or ``BlobChange/Reason/expired``; a victim is removed only if it
    /// is still the stored version (and, for an expiry, still expired at the barrier's time). Never
    /// durable: a crash that undoes it leaves blobs the next eviction or sweep picks again.
    case drop([CacheVictim], reason: BlobChange.Reason)

    var durable: Bool {
        switch self {
        case .put(let put): return put.durable
        case .remove(_, _, let durable), .removeAll(let durable): return durable
        case .drop: return false
        }
    }
}

/// What a committed mutation did.
enum MutationOutcome: Sendable {
    case stored(BlobMetadata)
    case removed(identifier: String, existed: Bool)
    case removedAll
    /// A ``Mutation/drop(_:reason:)`` removed these blobs (for `reason`); the other victims were
    /// replaced or gone.
    case dropped(identifiers: [String], reason: BlobChange.Reason)
}

extension Result where Success == MutationOutcome {
    /// The metadata of a committed put.
    func storedMetadata() throws -> BlobMetadata {
        guard case .stored(let metadata) = try get() else { preconditionFailure("a put commits to .stored") }
        return metadata
    }
}

/// One step of a commit, as recorded in ``StoreTestHooks/commitLog``. Puts are named by their temp file.
enum CommitEvent: Equatable, Sendable {
    /// A round of syncs made durable the content of `temps` and the entries of `folders` (only those that succeeded).
    case synced(temps: [String], folders: [String])
    /// A barrier renamed the temp files of these durable puts into place, touching `folders`.
    case renamed(temps: [String], folders: [String])
    /// These durable puts were reported as successes.
    case acknowledged(temps: [String])
}
