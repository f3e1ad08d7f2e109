import Foundation
import Testing

/// `blobd --backend memory`: the same daemon serves in-memory stores, which have names, events,
/// listings and totals like file stores, leave nothing on disk, and are gone when the daemon exits.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct MemoryBackendTests {
    private let events = EventsAndMetricsTests()

    @Test func theMemoryBackendServesStoresWithNamesEventsAndListings() throws {
        let folder = TempFolder()
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--backend", "memory"])
        let client = try daemon.connect()
        #expect(daemon.log.contains("backend memory"), "\(daemon.log)")

        #expect(try client.request("GET", "/v1/stores/notes/blobs/a").status == 404)
        let stream = try events.openStream(daemon, query: "?store=notes")
        let put = try client.request("PUT", "/v1/stores/notes/blobs/a%2Fb", headers: ["Content-Type": "text/plain", "Blob-Meta-Colour": "red"], body: Array("hello world".utf8))
        #expect(put.status == 201, "\(put.text)")
        let etag = try #require(put.header("ETag"))
        #expect(try client.request("PUT", "/v1/stores/notes/blobs/c", body: Array("second".utf8)).status == 201)

        let get = try client.request("GET", "/v1/stores/notes/blobs/a%2Fb")
        #expect(get.status == 200 && get.text == "hello world")
        #expect(get.header("Content-Type") == "text/plain" && get.header("Blob-Meta-colour") == "red" && get.header("ETag") == etag)
        let head = try client.request("HEAD", "/v1/stores/notes/blobs/a%2Fb")
        #expect(head.status == 200 && head.header("Content-Length") == "11")
        let part = try client.request("GET", "/v1/stores/notes/blobs/a%2Fb", headers: ["Range": "bytes=6-"])
        #expect(part.status == 206 && part.text == "world" && part.header("Content-Range") == "bytes 6-10/11")
        #expect(try client.request("GET", "/v1/stores/notes/blobs/a%2Fb", headers: ["If-None-Match": etag]).status == 304)
        #expect(try client.request("PUT", "/v1/stores/notes/blobs/a%2Fb", headers: ["If-None-Match": "*"], body: [1]).status == 412)
        // A large blob comes from memory too (a file store would send it with sendfile).
        let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try client.request("PUT", "/v1/stores/notes/blobs/large", body: large).status == 201)
        #expect(try client.request("GET", "/v1/stores/notes/blobs/large").body == large)

        let list = try client.request("GET", "/v1/stores/notes/blobs?limit=2")
        let items = try #require(list.json?["items"] as? [[String: Any]])
        #expect(items.map { $0["identifier"] as? String } == ["a/b", "c"])
        #expect(list.json?["nextCursor"] is String)
        let stores = try #require(try client.request("GET", "/v1/stores").json?["stores"] as? [[String: Any]])
        #expect(stores.map { $0["name"] as? String } == ["notes"])
        #expect(stores.first?["open"] as? Bool == true && stores.first?["count"] as? Int == 3)
        #expect(try client.request("GET", "/metrics").text.contains("notes"))
        let verify = try client.request("POST", "/v1/stores/notes/verify")
        #expect(verify.status == 200 && verify.json?["healthy"] as? Int == 3 && (verify.json?["quarantined"] as? [Any])?.isEmpty == true, "\(verify.text)")

        #expect(try client.request("DELETE", "/v1/stores/notes/blobs/c").status == 204)
        #expect(try client.request("DELETE", "/v1/stores/notes/blobs/c").status == 404)
        #expect(try client.request("DELETE", "/v1/stores/notes/blobs").status == 204)
        #expect(try client.request("GET", "/v1/stores/notes/blobs/a%2Fb").status == 404)

        let first = try events.nextEvent(stream)
        #expect(first.event == "put" && (first.data["blob"] as? [String: Any])?["identifier"] as? String == "a/b")
        #expect(try events.nextEvent(stream).event == "put")
        #expect(try events.nextEvent(stream).event == "put")
        #expect(try events.nextEvent(stream).event == "removed")
        #expect(try events.nextEvent(stream).event == "removed-all")

        // A refused put leaves no store behind, and nothing at all went to disk.
        #expect(try client.request("PUT", "/v1/stores/never/blobs/x", headers: ["Blob-Validate": "image"], body: [1, 2, 3]).status == 415)
        let after = try #require(try client.request("GET", "/v1/stores").json?["stores"] as? [[String: Any]])
        #expect(after.map { $0["name"] as? String } == ["notes"])
        #expect(!FileManager.default.fileExists(atPath: daemon.root), "the memory backend created its root")

        // Gone at exit: a new daemon starts empty.
        daemon.terminate()
        let next = try DaemonProcess(folder: folder, extraArguments: ["--backend", "memory"])
        #expect(try next.connect().request("GET", "/v1/stores/notes/blobs").status == 404)
    }
}
