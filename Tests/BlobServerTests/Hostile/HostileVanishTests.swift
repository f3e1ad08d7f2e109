import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Clients that vanish mid-head, mid-body and mid-response: the daemon keeps serving, leaves no
/// temp file, stores nothing half-written, and closes its side of every abandoned connection.
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct HostileVanishTests {
    /// Sends `bytes`, then drops the connection (or half-closes it with `halfClose`).
    static func vanish(_ daemon: DaemonProcess, after bytes: String, halfClose: Bool = false, pause: Bool = true) throws {
        let client = try WireClient(path: daemon.socketPath)
        client.send(bytes)
        if pause { usleep(20_000) }  // let the daemon take the bytes before the close
        if halfClose {
            client.shutdownWrite()
            #expect(client.awaitClose(allowedExtraBytes: Int.max), "the daemon should close a half-closed connection with an incomplete request")
        }
    }

    @Test func clientsVanishingMidHeadAndMidBody() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        #expect(try Hostile.fetch(daemon, Hostile.put("/v1/stores/gone/blobs/seed", body: "seed")).status == 201)
        var count = 0
        // Mid-head.
        let heads = [
            "G", "GET /v1/hea", "GET /v1/health HTTP/1.1", "GET /v1/health HTTP/1.1\r\n", "GET /v1/health HTTP/1.1\r\nHost: blo",
            "PUT /v1/stores/gone/blobs/h HTTP/1.1\r\nContent-Length: 5\r\n",
        ]
        for head in heads {
            try Self.vanish(daemon, after: head)
            try Self.vanish(daemon, after: head, halfClose: true)
            count += 2
        }
        // Mid-body with Content-Length: the upload is cancelled, the blob absent, the temp file gone.
        let big = String(repeating: "b", count: 64 * 1024)
        let bodies: [(id: String, bytes: String)] = [
            ("cl-small", "PUT /v1/stores/gone/blobs/cl-small HTTP/1.1\r\nContent-Length: 10\r\n\r\nhalf"),
            ("cl-big", "PUT /v1/stores/gone/blobs/cl-big HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n" + big),
            ("cl-2tib", "PUT /v1/stores/gone/blobs/cl-2tib HTTP/1.1\r\nContent-Length: 2199023255552\r\n\r\n" + big),
            ("cl-none", "PUT /v1/stores/gone/blobs/cl-none HTTP/1.1\r\nContent-Length: 100\r\n\r\n"),
            ("ch-mid-data", "PUT /v1/stores/gone/blobs/ch-mid-data HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10000\r\n" + big.prefix(30_000)),
            ("ch-after-chunk", "PUT /v1/stores/gone/blobs/ch-after-chunk HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"),
            ("ch-mid-size", "PUT /v1/stores/gone/blobs/ch-mid-size HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1f"),
            ("ch-before-trailer", "PUT /v1/stores/gone/blobs/ch-before-trailer HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n"),
            ("expect-waiting", "PUT /v1/stores/gone/blobs/expect-waiting HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"),
        ]
        for body in bodies {
            try Self.vanish(daemon, after: body.bytes)
            try Self.vanish(daemon, after: body.bytes.replacingOccurrences(of: body.id, with: body.id + "-half"), halfClose: true)
            count += 2
        }
        let leftovers = Hostile.waitForEmptyTempFolders(daemon)
        #expect(leftovers.isEmpty, "temp files left by vanished uploads: \(leftovers)")
        for body in bodies {
            for id in [body.id, body.id + "-half"] {
                #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/gone/blobs/\(id)")).status == 404, "\(id) was stored")
            }
        }
        let list = try Hostile.fetch(daemon, Hostile.get("/v1/stores/gone/blobs"))
        #expect(((list.json?["items"] as? [[String: Any]]) ?? []).count == 1, "\(list.text)")
        // A vanished event-stream client.
        try Self.vanish(daemon, after: Hostile.get("/v1/events"))
        count += 1
        let open = Hostile.waitForOpenConnections(daemon, atMost: 1)
        #expect(open == 1, "abandoned connections are still open: \(open.map { String($0) } ?? "unknown")")
        Hostile.checkSurvived(daemon, group: "vanished clients (\(count) cases)")
    }

    @Test func clientsVanishingMidResponse() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        var generator = SystemRandomNumberGenerator()
        let content = (0..<(4 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        do {
            let put = try WireClient(path: daemon.socketPath)
            put.send(Array("PUT /v1/stores/big/blobs/four HTTP/1.1\r\nContent-Length: \(content.count)\r\n\r\n".utf8) + content)
            #expect(try put.readResponse().status == 201)
        }
        // Read 1 KiB of the 4 MiB body, then close; again with the response still unread, and with a range.
        for round in 0..<12 {
            let client = try WireClient(path: daemon.socketPath)
            let request = round % 3 == 2 ? Hostile.get("/v1/stores/big/blobs/four", ["Range: bytes=1000-"]) : Hostile.get("/v1/stores/big/blobs/four")
            client.send(request)
            if round % 3 != 1 {
                let first = client.readBytes(1024)
                #expect(first.count == 1024)
            }
        }
        // Pipelined big GETs, abandoned after the first head.
        do {
            let client = try WireClient(path: daemon.socketPath)
            client.send(String(repeating: Hostile.get("/v1/stores/big/blobs/four"), count: 8))
            _ = client.readBytes(200)
        }
        let open = Hostile.waitForOpenConnections(daemon, atMost: 1)
        #expect(open == 1, "abandoned connections are still open: \(open.map { String($0) } ?? "unknown")")
        // The blob is intact for a reader that stays.
        let get = try Hostile.fetch(daemon, Hostile.get("/v1/stores/big/blobs/four"))
        #expect(get.status == 200 && get.body == content)
        Hostile.checkSurvived(daemon, group: "vanished readers (13 cases)")
    }
}
