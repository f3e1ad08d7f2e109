import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import S3BlobStore

/// The HTTP endpoint bucket notifications are POSTed to: it answers at once, hands records to its
/// handler in order, and stays up through malformed, oversized and excess requests.
@Suite struct NotificationReceiverTests {
    /// Collects what the handler got.
    final class Collected: Sendable {
        let events = Locked<[S3BucketEvent]>([])
        let arrived = DispatchSemaphore(value: 0)

        func handler(_ event: S3BucketEvent) {
            events.withLock { $0.append(event) }
            arrived.signal()
        }

        /// Waits (at most 10 s each) for `count` records.
        func wait(for count: Int) -> [S3BucketEvent] {
            for _ in 0..<count { _ = arrived.wait(timeout: .now() + 10) }
            return events.withLock { $0 }
        }
    }

    /// One client connection to the receiver.
    final class Client {
        let socket: FileDescriptor
        var buffered: [UInt8] = []

        init(_ receiver: S3NotificationReceiver) throws {
            socket = try TCPSocket.connect(host: "127.0.0.1", port: receiver.address.port, timeout: .seconds(5))
        }

        deinit { try? socket.close() }

        func send(_ text: String) throws {
            try Array(text.utf8).withUnsafeBytes { try socket.sendAll($0, timeout: .seconds(5)) }
        }

        func post(_ body: String, keepAlive: Bool = true) throws {
            try send("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + (keepAlive ? "" : "Connection: close\r\n") + "\r\n" + body)
        }

        /// The status line of the next answer (answers have empty bodies), or nil at end of stream.
        func status() throws -> String? {
            while true {
                if let end = buffered.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: buffered[..<end.lowerBound], as: UTF8.self)
                    buffered.removeSubrange(..<end.upperBound)
                    return head.components(separatedBy: "\r\n").first
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = try chunk.withUnsafeMutableBytes { try socket.receive(into: $0, timeout: .seconds(10)) }
                if count == 0 { return nil }
                buffered += chunk[..<count]
            }
        }
    }

    static func record(_ key: String, _ name: String = "ObjectCreated:Put") -> String {
        #"{"Records":[{"eventName":"\#(name)","eventTime":"2026-11-24T18:31:16Z","s3":{"object":{"key":"\#(key)","eTag":"e\#(key)","size":1}}}]}"#
    }

    @Test func recordsReachTheHandlerInOrderAndEachPostIsAnswered200() throws {
        let collected = Collected()
        let receiver = try S3NotificationReceiver(handler: collected.handler)
        defer { receiver.stop() }
        let client = try Client(receiver)
        for index in 0..<20 {
            try client.post(Self.record("k\(index)", index % 2 == 0 ? "ObjectCreated:Put" : "ObjectRemoved:Delete"))
            #expect(try client.status() == "HTTP/1.1 200 OK")
        }
        let events = collected.wait(for: 20)
        #expect(events.map(\.key) == (0..<20).map { "k\($0)" })
        #expect(events[1].isRemoval)
        #expect(receiver.counters.accepted == 20)
    }

    @Test func malformedRequestsGetAnErrorAndTheReceiverKeepsGoing() throws {
        let collected = Collected()
        let receiver = try S3NotificationReceiver(limits: S3NotificationReceiverLimits(bodyByteLimit: 4096), handler: collected.handler)
        defer { receiver.stop() }

        // A body that is not a notification: 400, and the same connection still works.
        let client = try Client(receiver)
        try client.post("{not json")
        #expect(try client.status() == "HTTP/1.1 400 Bad Request")
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.status() == "HTTP/1.1 405 Method Not Allowed")
        try client.post(Self.record("after"))
        #expect(try client.status() == "HTTP/1.1 200 OK")

        // A head that is not HTTP: 400 and that connection closes.
        let garbage = try Client(receiver)
        try garbage.send("\u{1}\u{2} nonsense\r\n\r\n")
        #expect(try garbage.status()?.hasPrefix("HTTP/1.1 400") == true)
        #expect(try garbage.status() == nil)

        // Over the body limit: 413 before the body is read, then closed.
        let large = try Client(receiver)
        try large.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4097\r\n\r\n")
        #expect(try large.status() == "HTTP/1.1 413 Content Too Large")
        #expect(try large.status() == nil)

        // Chunked bodies are not taken.
        let chunked = try Client(receiver)
        try chunked.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(try chunked.status() == "HTTP/1.1 411 Length Required")

        // And a fresh connection is served as before.
        let later = try Client(receiver)
        try later.post(Self.record("last"), keepAlive: false)
        #expect(try later.status() == "HTTP/1.1 200 OK")
        #expect(try later.status() == nil, "Connection: close is honoured")
        #expect(collected.wait(for: 2).map(\.key) == ["after", "last"])
        #expect(receiver.counters.refused == 5)
    }

    @Test func connectionsOverTheLimitAreTurnedAwayWith503() throws {
        let receiver = try S3NotificationReceiver(limits: S3NotificationReceiverLimits(connectionLimit: 2), handler: { _ in })
        defer { receiver.stop() }
        let first = try Client(receiver), second = try Client(receiver)
        // Both are served (an answer proves the receiver took each before the third connects).
        for client in [first, second] {
            try client.post(Self.record("k"))
            #expect(try client.status() == "HTTP/1.1 200 OK")
        }
        let third = try Client(receiver)
        #expect(try third.status() == "HTTP/1.1 503 Service Unavailable")
        #expect(try third.status() == nil)
        try first.post(Self.record("k"))
        #expect(try first.status() == "HTTP/1.1 200 OK", "the admitted connections carry on")
    }

    @Test func aSilentConnectionIsClosedAfterTheReadTimeout() throws {
        let receiver = try S3NotificationReceiver(limits: S3NotificationReceiverLimits(readTimeout: .milliseconds(200)), handler: { _ in })
        defer { receiver.stop() }
        let client = try Client(receiver)
        try client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
        #expect(try client.status() == nil, "closed without an answer once the sender stalls")
    }

    @Test func aFullQueueAnswers503SoTheGatewayRetries() throws {
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let receiver = try S3NotificationReceiver(limits: S3NotificationReceiverLimits(queueLimit: 1)) { _ in
            started.signal()
            release.wait()
        }
        defer { receiver.stop() }
        let client = try Client(receiver)
        try client.post(Self.record("held"))
        #expect(try client.status() == "HTTP/1.1 200 OK")
        #expect(started.wait(timeout: .now() + 10) == .success)  // the handler holds the first record
        try client.post(Self.record("queued"))
        #expect(try client.status() == "HTTP/1.1 200 OK")
        try client.post(Self.record("over"))
        #expect(try client.status() == "HTTP/1.1 503 Service Unavailable")
        release.signal()
        release.signal()
    }

    @Test func stopEndsEveryThreadAndFreesThePort() throws {
        let receiver = try S3NotificationReceiver(handler: { _ in })
        let client = try Client(receiver)
        try client.post(Self.record("k"))
        #expect(try client.status() == "HTTP/1.1 200 OK")
        receiver.stop()
        #expect(try client.status() == nil, "open connections are closed")
        #expect(throws: TCPSocketError.self) { _ = try Client(receiver) }
    }
}
