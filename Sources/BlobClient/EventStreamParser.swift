/// One Server-Sent Event.
package struct ServerSentEvent: Hashable, Sendable {
    /// The `id:` of the event, if it had one.
    package var id: String?
    /// The `event:` type; `message` when absent.
    package var event: String
    /// The `data:` lines joined with newlines.
    package var data: String

    /// Creates an event.
    package init(id: String?, event: String, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}

/// An incremental `text/event-stream` parser (WHATWG HTML §9.2): feed bytes as they arrive, in
/// pieces of any size; complete events come out. Comment lines (`:` heartbeats) are skipped.
package struct EventStreamParser: Sendable {
    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var eventType = ""
    private var data: [UInt8] = []
    private var hasData = false
    private var pendingID: String?
    private var sawID = false
    /// The id of the last event with an `id:` field, to send back as `Last-Event-ID` when reconnecting.
    package private(set) var lastEventID: String?

    /// Creates a parser at the start of a stream.
    package init() {}

    /// Parses `bytes` and returns the events they completed.
    package mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == 0x0A { continue }
            }
            if byte == 0x0D || byte == 0x0A {
                afterCarriageReturn = byte == 0x0D
                if let event = processLine() { events.append(event) }
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        return events
    }

    /// Forgets a partly received event (after a dropped connection); keeps ``lastEventID``.
    package mutating func resetPartialEvent() {
        line.removeAll()
        afterCarriageReturn = false
        eventType = ""
        data.removeAll()
        hasData = false
        pendingID = nil
        sawID = false
    }

    private mutating func processLine() -> ServerSentEvent? {
        if line.isEmpty { return dispatch() }
        if line[0] == 0x3A { return nil }  // Comment.
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: 0x3A) {
            field = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == 0x20 { value = value.dropFirst() }
        } else {
            field = line[...]
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "id":
            if !value.contains(0) {
                pendingID = String(decoding: value, as: UTF8.self)
                sawID = true
            }
        default:
            break  // `retry` and unknown fields are ignored.
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
            pendingID = nil
            sawID = false
        }
        if sawID { lastEventID = pendingID }
        guard hasData else { return nil }
        return ServerSentEvent(
            id: sawID ? pendingID : lastEventID, event: eventType.isEmpty ? "message" : eventType,
            data: String(decoding: data, as: UTF8.self))
    }
}
