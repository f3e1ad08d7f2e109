import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `/v1/events` (Server-Sent Events) and `/metrics` against a running daemon.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct EventsAndMetricsTests {
    /// Opens an event stream and checks its head.
    func openStream(_ daemon: DaemonProcess, query: String = "", lastEventID: String? = nil) throws -> RawClient {
        let client = try daemon.connect()
        var head = "GET /v1/events\(query) HTTP/1.1\r\nHost: blobd\r\n"
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        try client.send(head + "\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/event-stream")
        #expect(response.header("Content-Length") == nil)
        return client
    }

    /// Reads one event frame and returns its fields.
    func nextEvent(_ client: RawClient) throws -> (id: UInt64, event: String, data: [String: Any]) {
        var frame = try client.readUntil("\n\n")
        while frame.hasPrefix(":") { frame = try client.readUntil("\n\n") }  // heartbeats
        var id: UInt64 = 0, event = "", data: [String: Any] = [:]
        for line in frame.split(separator: "\n") {
            if line.hasPrefix("id: ") { id = UInt64(line.dropFirst(4)) ?? 0 }
            if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") {
                data = (try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8))) as? [String: Any] ?? [:]
            }
        }
        return (id, event, data)
    }

    @Test func eventsFollowPutsRemovesAndRemoveAllOfTheChosenStore() throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.connect()
        #expect(try writer.request("PUT", "/v1/stores/watched/blobs/seed", body: [1]).status == 201)
        let stream = try openStream(daemon, query: "?store=watched")
        #expect(try writer.request("PUT", "/v1/stores/other/blobs/ignored", body: [2]).status == 201)
        #expect(try writer.request("PUT", "/v1/stores/watched/blobs/a%2Fb", body: Array("hello".utf8)).status == 201)
        #expect(try writer.request("DELETE", "/v1/stores/watched/blobs/a%2Fb").status == 204)
        #expect(try writer.request("DELETE", "/v1/stores/watched/blobs").status == 204)

        let put = try nextEvent(stream)
        #expect(put.event == "put")
        #expect(put.data["store"] as? String == "watched")
        let blob = put.data["blob"] as? [String: Any]
        #expect(blob?["identifier"] as? String == "a/b")
        #expect(blob?["size"] as? Int == 5)
        let removed = try nextEvent(stream)
        #expect(removed.event == "removed")
        #expect(removed.data["identifier"] as? String == "a/b")
        let all = try nextEvent(stream)
        #expect(all.event == "removed-all")
        #expect(put.id < removed.id && removed.id < all.id)

        // A client reconnecting after the put gets what it missed, in order.
        let resumed = try openStream(daemon, query: "?store=watched", lastEventID: String(put.id))
        #expect(try nextEvent(resumed).id == removed.id)
        #expect(try nextEvent(resumed).id == all.id)
    }

    /// Puts `count` one-byte blobs `prefix0`, `prefix1`, … to `store`, `batch` pipelined requests at
    /// a time (few enough that the requests and their answers fit in the sockets' buffers).
    func putMany(_ client: RawClient, store: String, prefix: String, count: Int, extraHeaders: String = "", batch size: Int = 100) throws {
        var done = 0
        while done < count {
            let batch = min(size, count - done)
            var bytes: [UInt8] = []
            for i in done..<(done + batch) {
                bytes += Array("PUT /v1/stores/\(store)/blobs/\(prefix)\(i) HTTP/1.1\r\nHost: blobd\r\nContent-Length: 1\r\n\(extraHeaders)\r\nx".utf8)
            }
            try client.send(bytes)
            for _ in 0..<batch { #expect(try client.readResponse(method: "PUT").status == 201) }
            done += batch
        }
    }

    /// A backlog far larger than a socket's buffers (and than the 4 MiB the daemon once buffered per
    /// subscriber) is sent after the head, as the client reads.
    @Test func aReconnectWithALargeBacklogGetsTheHeadAndEveryRetainedEvent() throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.connect()
        let first = try openStream(daemon, query: "?store=big")
        #expect(try writer.request("PUT", "/v1/stores/big/blobs/start", body: [1]).status == 201)
        let start = try nextEvent(first)
        #expect(start.event == "put")
        // 700 events of about 7 KiB each (metadata): about 5 MiB of frames.
        let padding = (1...7).map { "Blob-Meta-Pad\($0): " + String(repeating: "p", count: 1000) + "\r\n" }.joined()
        try putMany(writer, store: "big", prefix: "e", count: 700, extraHeaders: padding, batch: 5)
        let resumed = try openStream(daemon, query: "?store=big", lastEventID: String(start.id))
        for i in 0..<700 {
            let event = try nextEvent(resumed)
            #expect(event.id == start.id + UInt64(i) + 1)
            #expect((event.data["blob"] as? [String: Any])?["identifier"] as? String == "e\(i)")
            if event.id != start.id + UInt64(i) + 1 { break }
        }
        // Live events follow the backlog.
        #expect(try writer.request("PUT", "/v1/stores/big/blobs/live", body: [1]).status == 201)
        #expect((try nextEvent(resumed).data["blob"] as? [String: Any])?["identifier"] as? String == "live")
    }

    /// A subscriber that stops reading is disconnected once an event it has not been sent leaves the
    /// daemon's log of the last 10,000 events: not before, and long before the 4 MiB of frames
    /// (about 15,000 of these) the daemon once let pile up.
    @Test func aReaderThatFallsTenThousandEventsBehindIsDisconnected() throws {
        // No heartbeats: reading a stream that is kept open times out instead of going on forever.
        let daemon = try DaemonProcess(extraArguments: ["--heartbeat", "3600"])
        let writer = try daemon.connect()
        let slow = try openStream(daemon)
        #expect(Hostile.metric(daemon, "blobd_event_subscribers") == 1)
        try putMany(writer, store: "s", prefix: "", count: 10_000)
        // Nothing it is owed has left the log yet, however little it read.
        #expect(Hostile.metric(daemon, "blobd_event_subscribers") == 1)
        // Then each batch pushes out events; it is dropped once one it was not sent goes (the
        // sockets hold some hundreds of frames it was sent). The drop is counted before a put is answered.
        var puts = 10_000
        while puts < 14_000, Hostile.metric(daemon, "blobd_event_subscribers") == 1 {
            try putMany(writer, store: "s", prefix: "more\(puts)-", count: 100)
            puts += 100
        }
        #expect(Hostile.metric(daemon, "blobd_event_subscribers") == 0, "still subscribed after \(puts) events")
        #expect(slow.isClosedByPeer(), "a reader more than 10,000 events behind was kept")
        // A reader that keeps up is not disconnected by the same traffic.
        let steady = try openStream(daemon)
        try putMany(writer, store: "s", prefix: "again", count: 1)
        #expect(try nextEvent(steady).event == "put")
    }

    @Test func aTooOldLastEventIDIsToldAboutTheGap() throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.connect()
        #expect(try writer.request("PUT", "/v1/stores/s/blobs/x", body: [1]).status == 201)
        let stream = try openStream(daemon, lastEventID: "1")
        let gap = try nextEvent(stream)
        #expect(gap.event == "gap")
        #expect(gap.data["lastEventId"] as? Int == 1)
        #expect((gap.data["firstAvailableId"] as? Int ?? 0) > 1)
        #expect(try nextEvent(stream).event == "put")
    }

    @Test func idleStreamsGetHeartbeatsAndShutdownEndsThem() throws {
        let daemon = try DaemonProcess(extraArguments: ["--heartbeat", "0.2"])
        let stream = try openStream(daemon)
        #expect(try stream.readUntil("\n\n") == ": heartbeat\n\n")
        daemon.terminate()
        #expect(daemon.waitForExit(seconds: 5) == 0, "blobd's log: \(daemon.log)")
        #expect(stream.isClosedByPeer())
    }

    @Test func malformedLastEventIDIsRefused() throws {
        let daemon = try DaemonProcess()
        let response = try daemon.connect().request("GET", "/v1/events", headers: ["Last-Event-ID": "abc"])
        #expect(response.status == 400)
        #expect(try daemon.connect().request("GET", "/v1/events?store=Bad!").status == 400)
    }

    @Test func metricsCountRequestsErrorsBytesAndStores() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/m/blobs/one", body: Array(repeating: 7, count: 1000)).status == 201)
        #expect(try client.request("GET", "/v1/stores/m/blobs/one").status == 200)
        #expect(try client.request("GET", "/v1/stores/m/blobs/missing").status == 404)
        let page = try client.request("GET", "/metrics")
        #expect(page.status == 200)
        #expect(page.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = page.text
        #expect(text.contains("blobd_requests_total{operation=\"put\"} 1\n"))
        #expect(text.contains("blobd_requests_total{operation=\"get\"} 2\n"))
        #expect(text.contains("blobd_request_errors_total{operation=\"get\"} 1\n"))
        #expect(text.contains("blobd_received_bytes_total 1000\n"))
        #expect(text.contains("blobd_sent_bytes_total "))
        #expect(text.contains("blobd_request_duration_seconds_count{operation=\"put\"} 1\n"))
        #expect(text.contains("blobd_open_connections 1\n"))
        #expect(text.contains("blobstore_store_blobs{store=\"m\"} 1\n"))
        #expect(text.contains("blobstore_store_bytes{store=\"m\"} 1000\n"))
        // Every sample line is NAME{labels} VALUE or NAME VALUE.
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(line.split(separator: " ").count == 2, "malformed sample line: \(line)")
        }
    }
}
