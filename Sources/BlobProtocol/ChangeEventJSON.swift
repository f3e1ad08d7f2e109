import BlobStore
import Foundation

/// The change feed's events (docs/PROTOCOL.md, "Change events"): their names and their one-line
/// JSON `data`, written by blobd and read by its client.
package enum ChangeEventJSON {
    /// `event:` of a stored blob version.
    package static let put = "put"
    /// `event:` of a removed blob.
    package static let removed = "removed"
    /// `event:` of a blob removed because it expired (``BlobChange/Reason/expired``).
    package static let expired = "expired"
    /// `event:` of a blob evicted to keep its store within its limits (``BlobChange/Reason/evicted``).
    package static let evicted = "evicted"
    /// `event:` of a store emptied at once.
    package static let removedAll = "removed-all"
    /// `event:` telling a resuming client that events were lost.
    package static let gap = "gap"

    /// The event name and `data` of a change: `{"store":…,"blob":{metadata object}|"identifier":…,"date":…}`.
    /// A removal by the store's policy is its own event (`expired`, `evicted`), with a removal's data.
    package static func encode(_ change: BlobChange) -> (event: String, data: [UInt8]) {
        var data: [UInt8] = []
        data.append(contentsOf: #"{"store":"#.utf8)
        JSONText.appendString(change.store, into: &data)
        let event: String
        switch change.kind {
        case .put(let metadata):
            event = put
            data.append(contentsOf: #","blob":"#.utf8)
            MetadataJSON.append(metadata, into: &data)
        case .removed(let identifier):
            switch change.reason {
            case .requested: event = removed
            case .expired: event = expired
            case .evicted: event = evicted
            }
            data.append(contentsOf: #","identifier":"#.utf8)
            JSONText.appendString(identifier, into: &data)
        case .removedAll:
            event = removedAll
        }
        data.append(contentsOf: #","date":"#.utf8)
        JSONText.appendString(HTTPDates.rfc3339(change.date), into: &data)
        data.append(0x7D)
        return (event, data)
    }

    /// The `data` of a `gap` event: `{"lastEventId":N,"firstAvailableId":M}`.
    package static func encodeGap(lastEventID: UInt64, firstAvailableID: UInt64) -> [UInt8] {
        Array(#"{"lastEventId":\#(lastEventID),"firstAvailableId":\#(firstAvailableID)}"#.utf8)
    }

    /// What one event says.
    package enum Event: Hashable, Sendable {
        /// A committed change.
        case change(BlobChange)
        /// Events after `lastEventID` and before `firstAvailableID` are gone.
        case gap(lastEventID: UInt64, firstAvailableID: UInt64)
    }

    private struct Payload: Decodable {
        var store: String?
        var blob: MetadataJSON.Wire?
        var identifier: String?
        var date: String?
        var lastEventId: UInt64?
        var firstAvailableId: UInt64?
    }

    /// The event with name `event`, `id:` `id` and `data`; `nil` for event names this build does
    /// not know (a newer daemon may send more).
    package static func decode(event: String, id: String?, data: String) throws(WireFormatError) -> Event? {
        let payload = try MetadataJSON.decode(Payload.self, Array(data.utf8))
        if event == gap {
            return .gap(lastEventID: payload.lastEventId ?? 0, firstAvailableID: payload.firstAvailableId ?? 0)
        }
        let kind: BlobChange.Kind
        var reason = BlobChange.Reason.requested
        switch event {
        case put:
            guard let blob = payload.blob else { throw WireFormatError("put event without a blob: \(data)") }
            kind = .put(try blob.metadataValue())
        case removed, expired, evicted:
            guard let identifier = payload.identifier else { throw WireFormatError("\(event) event without an identifier: \(data)") }
            kind = .removed(identifier: identifier)
            reason = event == expired ? .expired : event == evicted ? .evicted : .requested
        case removedAll:
            kind = .removedAll
        default:
            return nil
        }
        let date = payload.date.flatMap(HTTPDates.parseRFC3339) ?? Date()
        return .change(BlobChange(sequence: id.flatMap { UInt64($0) } ?? 0, store: payload.store ?? "", kind: kind, date: date, reason: reason))
    }
}
