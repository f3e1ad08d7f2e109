internal import BlobSystem
import Foundation

/// What ``PersistentDataStore/verify()`` found.
public struct VerificationReport: Hashable, Sendable, Codable {
    /// One problem, with the file it concerns.
    public struct Finding: Hashable, Sendable, Codable {
        /// The file.
        public var path: String
        /// The blob's identifier, when the file says.
        public var identifier: String?
        /// What is wrong.
        public var reason: String

        /// A finding (for backends outside this module).
        package init(path: String, identifier: String?, reason: String) {
            self.path = path
            self.identifier = identifier
            self.reason = reason
        }
    }

    /// Blobs whose content matched their checksum.
    public var healthy: Int
    /// Blob files whose header or content is damaged.
    public var corrupt: [Finding]
    /// Files and folders that are not blobs of this store, or sit in the wrong bucket.
    public var orphaned: [Finding]
    /// With a repair (``PersistentDataStore/verify(repair:)``), where each corrupt and orphaned
    /// entry was moved; `nil` for a plain check.
    public var quarantined: [QuarantinedEntry]?

    /// Whether nothing is wrong.
    public var isClean: Bool { corrupt.isEmpty && orphaned.isEmpty }

    /// A report of a check, without a repair.
    public init(healthy: Int, corrupt: [Finding], orphaned: [Finding], quarantined: [QuarantinedEntry]? = nil) {
        self.healthy = healthy
        self.corrupt = corrupt
        self.orphaned = orphaned
        self.quarantined = quarantined
    }
}

/// An entry that a repair moved out of the store's layout into its `quarantine/` folder.
public struct QuarantinedEntry: Hashable, Sendable, Codable {
    /// Where it was.
    public var from: String
    /// Where it is now.
    public var to: String

    /// An entry moved from `from` to `to`.
    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }
}
