import Foundation
import Testing

/// Cache mode end to end over HTTP: expiry and eviction as blobd serves them. These need the policy
/// engine (expiry and eviction in the stores) and fail before it is merged.
@Suite(
    .serialized, .timeLimit(.minutes(2)), .enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct CacheModeWireTests {
    private let events = EventsAndMetricsTests()

    @Test(arguments: ["file", "memory"])
    func aBlobsExpiryIsStatedInTheHeadersAndItsMetadata(backend: String) throws {
        let daemon = try DaemonProcess(extraArguments: ["--backend", backend])
        let client = try daemon.connect()
        let put = try client.request("PUT", "/v1/stores/s/blobs/a", headers: ["Blob-Expires": "2099-01-01T00:00:00Z"], body: Array("x".utf8))
        #expect(put.status == 201 && put.json?["expires"] as? String == "2099-01-01T00:00:00.000Z", "\(put.text)")
        #expect(put.header("Blob-Expires") == "2099-01-01T00:00:00.000Z")
        let head = try client.request("HEAD", "/v1/stores/s/blobs/a")
        #expect(head.header("Blob-Expires") == "2099-01-01T00:00:00.000Z" && head.header("Expires") == "Thu, 01 Jan 2099 00:00:00 GMT")
        let listed = try #require((try client.request("GET", "/v1/stores/s/blobs").json?["items"] as? [[String: Any]])?.first)
        #expect(listed["expires"] as? String == "2099-01-01T00:00:00.000Z")
        // The store's default time to live applies to a put that names no expiry; `never` opts out.
        #expect(try client.request("PUT", "/v1/stores/s", body: Array(#"{"defaultTTL":3600}"#.utf8)).status == 200)
        let defaulted = try client.request("PUT", "/v1/stores/s/blobs/b", body: Array("y".utf8))
        let expires = try #require(defaulted.header("Blob-Expires"))
        #expect(expires > "2000" && defaulted.json?["expires"] as? String == expires)
        let never = try client.request("PUT", "/v1/stores/s/blobs/c", headers: ["Blob-Expires": "never"], body: Array("z".utf8))
        #expect(never.header("Blob-Expires") == nil && never.json?["expires"] == nil)
        let maxAge = try client.request("PUT", "/v1/stores/s/blobs/d", headers: ["Cache-Control": "max-age=60"], body: Array("w".utf8))
        #expect(maxAge.header("Expires") != nil)
    }

    /// Also with the memory backend, where nothing but the store's background sweep removes the
    /// blob: no request after the put changes anything.
    @Test(arguments: ["file", "memory"])
    func anExpiredBlobIsNotServedAndItsRemovalIsAnExpiredEvent(backend: String) throws {
        // No heartbeats: a missing event ends the read (20 s) instead of waiting for ever.
        let daemon = try DaemonProcess(extraArguments: ["--heartbeat", "3600", "--backend", backend])
        let client = try daemon.connect()
        let stream = try events.openStream(daemon, query: "?store=s")
        #expect(try client.request("PUT", "/v1/stores/s/blobs/a", headers: ["Cache-Control": "max-age=1"], body: Array("x".utf8)).status == 201)
        #expect(try events.nextEvent(stream).event == "put")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try client.request("GET", "/v1/stores/s/blobs/a").status == 404)
        #expect(try client.request("HEAD", "/v1/stores/s/blobs/a").status == 404)
        let items = try #require(try client.request("GET", "/v1/stores/s/blobs").json?["items"] as? [[String: Any]])
        #expect(items.isEmpty, "listing never returns an expired blob")
        let expired = try events.nextEvent(stream)
        #expect(expired.event == "expired" && expired.data["identifier"] as? String == "a" && expired.data["store"] as? String == "s")
        #expect(try client.request("GET", "/metrics").text.contains("blobstore_store_expired_total{store=\"s\"} 1\n"))
    }

    @Test func evictionsAreEvictedEventsAndCountedInTheMetrics() throws {
        let daemon = try DaemonProcess(extraArguments: ["--heartbeat", "3600"])
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s", body: Array(#"{"maxCount":2}"#.utf8)).status == 201)
        let stream = try events.openStream(daemon, query: "?store=s")
        for name in ["a", "b", "c", "d"] {
            #expect(try client.request("PUT", "/v1/stores/s/blobs/\(name)", body: Array(name.utf8)).status == 201)
        }
        var evicted = 0
        let deadline = Date().addingTimeInterval(10)
        while evicted < 2 && Date() < deadline {
            let event = try events.nextEvent(stream)
            if event.event == "evicted" { evicted += 1 }
        }
        #expect(evicted == 2)
        let store = try client.request("GET", "/v1/stores/s").json
        #expect(store?["count"] as? Int == 2)
        #expect(try client.request("GET", "/metrics").text.contains("blobstore_store_evicted_total{store=\"s\"} 2\n"))
    }
}
