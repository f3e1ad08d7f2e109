import BlobStore
import Foundation

/// `GET /v1/stores`: `{"stores":[{"name":…,"open":…,"count":…,"bytes":…,"policy":…,"error":…,"heldBy":…},…]}`.
package enum StoreListJSON {
    /// One store as the daemon lists it.
    package struct Entry: Sendable {
        /// The store's name.
        package var name: String
        /// Whether the daemon has the store open.
        package var open: Bool
        /// Its totals (only for an open store, when they could be read).
        package var statistics: StoreStatistics?
        /// Its cache policy (only for an open store, when it could be read).
        package var policy: StorePolicy?
        /// Why the totals of an open store could not be read.
        package var error: String?
        /// The process holding the store's lock, for a store the daemon does not have open.
        package var heldBy: String?

        package init(name: String, open: Bool, statistics: StoreStatistics? = nil, error: String? = nil, heldBy: String? = nil) {
            self.name = name
            self.open = open
            self.statistics = statistics
            self.error = error
            self.heldBy = heldBy
        }
    }

    /// The document for `entries`, in their order; optional members are left out when absent.
    package static func encode(_ entries: [Entry]) -> [UInt8] {
        var out: [UInt8] = Array(#"{"stores":["#.utf8)
        for (index, store) in entries.enumerated() {
            if index > 0 { out.append(0x2C) }
            out.append(contentsOf: #"{"name":"#.utf8)
            JSONText.appendString(store.name, into: &out)
            out.append(contentsOf: (store.open ? #","open":true"# : #","open":false"#).utf8)
            if let statistics = store.statistics {
                out.append(contentsOf: #","count":\#(statistics.count),"bytes":\#(statistics.bytes)"#.utf8)
            }
            if let policy = store.policy {
                out.append(contentsOf: #","policy":"#.utf8)
                PolicyJSON.append(policy, into: &out)
            }
            if let error = store.error {
                out.append(contentsOf: #","error":"#.utf8)
                JSONText.appendString(error, into: &out)
            }
            if let holder = store.heldBy {
                out.append(contentsOf: #","heldBy":"#.utf8)
                JSONText.appendString(holder, into: &out)
            }
            out.append(0x7D)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    private struct Wire: Decodable {
        struct Entry: Decodable {
            var name: String
            /// Present for the stores the daemon has open.
            var count: Int?
            var bytes: Int64?
            var heldBy: String?
            var policy: PolicyJSON.Wire?
        }
        var stores: [Entry]
    }

    /// The summaries in a `GET /v1/stores` document (totals only where the daemon sent them).
    package static func decode(_ bytes: [UInt8]) throws(WireFormatError) -> [StoreSummary] {
        try decodeWithPolicies(bytes).map(\.summary)
    }

    /// The summaries and, for the stores the daemon has open, their cache policies.
    package static func decodeWithPolicies(_ bytes: [UInt8]) throws(WireFormatError) -> [(summary: StoreSummary, policy: StorePolicy?)] {
        try MetadataJSON.decode(Wire.self, bytes).stores.map { entry in
            var totals: StoreStatistics?
            if let count = entry.count, let bytes = entry.bytes { totals = StoreStatistics(count: count, bytes: bytes) }
            return (StoreSummary(name: entry.name, statistics: totals, heldBy: entry.heldBy), entry.policy?.policy)
        }
    }
}
