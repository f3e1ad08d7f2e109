import BlobProtocol
import BlobStore
import Foundation

/// Encodes change events as Server-Sent Events frames (`id:`, `event:`, `data:` lines, blank line).
enum SSEFrame {
    /// The frame for one change: `event: put|removed|removed-all`, `data:` a one-line JSON object.
    static func encode(_ change: BlobChange, id: UInt64) -> [UInt8] {
        let (event, data) = ChangeEventJSON.encode(change)
        return frame(id: id, event: event, data: data)
    }

    /// Tells a reconnecting client that events after `lastEventID` and before `firstAvailable` are gone.
    static func gap(lastEventID: UInt64, firstAvailable: UInt64, id: UInt64) -> [UInt8] {
        frame(id: id, event: ChangeEventJSON.gap, data: ChangeEventJSON.encodeGap(lastEventID: lastEventID, firstAvailableID: firstAvailable))
    }

    /// A comment line that keeps idle connections (and proxies) from timing out.
    static let heartbeat: [UInt8] = Array(": heartbeat\n\n".utf8)

    private static func frame(id: UInt64, event: String, data: [UInt8]) -> [UInt8] {
        // The JSON writer escapes newlines, so `data` is one line.
        var out = Array("id: \(id)\nevent: \(event)\ndata: ".utf8)
        out += data
        out += [0x0A, 0x0A]
        return out
    }
}
