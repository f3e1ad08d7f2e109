import BlobStore
import Foundation

/// Encodes change events as Server-Sent Events frames (`id:`, `event:`, `data:` lines, blank line).
enum SSEFrame {
    /// The frame for one change: `event: put|removed|removed-all`, `data:` a one-line JSON object.
    static func encode(_ change: BlobChange, id: UInt64) -> [UInt8] {
        var data: [UInt8] = []
        data.append(contentsOf: #"{"store":"#.utf8)
        JSONWriter.appendString(change.store, into: &data)
        let event: String
        switch change.kind {
        case .put(let metadata):
            event = "put"
            data.append(contentsOf: #","blob":"#.utf8)
            JSONWriter.appendMetadata(metadata, into: &data)
        case .removed(let identifier):
            event = "removed"
            data.append(contentsOf: #","identifier":"#.utf8)
            JSONWriter.appendString(identifier, into: &data)
        case .removedAll:
            event = "removed-all"
        }
        data.append(contentsOf: #","date":"#.utf8)
        JSONWriter.appendString(HTTPDates.rfc3339(change.date), into: &data)
        data.append(0x7D)
        return frame(id: id, event: event, data: data)
    }

    /// Tells a reconnecting client that events after `lastEventID` and before `firstAvailable` are gone.
    static func gap(lastEventID: UInt64, firstAvailable: UInt64, id: UInt64) -> [UInt8] {
        frame(id: id, event: "gap", data: Array(#"{"lastEventId":\#(lastEventID),"firstAvailableId":\#(firstAvailable)}"#.utf8))
    }

    /// A comment line that keeps idle connections (and proxies) from timing out.
    static let heartbeat: [UInt8] = Array(": heartbeat\n\n".utf8)

    private static func frame(id: UInt64, event: String, data: [UInt8]) -> [UInt8] {
        // JSONWriter escapes newlines, so `data` is one line.
        var out = Array("id: \(id)\nevent: \(event)\ndata: ".utf8)
        out += data
        out += [0x0A, 0x0A]
        return out
    }
}
