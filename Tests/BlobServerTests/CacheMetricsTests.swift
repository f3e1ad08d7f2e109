@testable import BlobServer
import BlobStore
import Foundation
import Testing

/// Cache mode's counters in `/metrics` (PROTOCOL.md, "Metrics"): each open store that has limits
/// gets its waiting puts and peak usage (``CacheCounters``), a store without limits none.
@Suite(
    .serialized, .timeLimit(.minutes(2)), .enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct CacheMetricsTests {
    @Test(arguments: ["file", "memory"])
    func anOpenStoreWithLimitsShowsItsWaitingPutsAndPeakUsage(backend: String) throws {
        let daemon = try DaemonProcess(extraArguments: ["--backend", backend])
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s", body: Array(#"{"maxCount":2}"#.utf8)).status == 201)
        #expect(try client.request("PUT", "/v1/stores/free/blobs/x", body: Array("x".utf8)).status == 201)
        for name in ["a", "b", "c", "d"] {
            #expect(try client.request("PUT", "/v1/stores/s/blobs/\(name)", body: Array("\(name)\(name)".utf8)).status == 201)
        }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, try client.request("GET", "/v1/stores/s").json?["count"] as? Int != 2 { Thread.sleep(forTimeInterval: 0.02) }
        let metrics = try client.request("GET", "/metrics").text
        for name in ["blobstore_store_waiting_puts", "blobstore_store_peak_blobs", "blobstore_store_peak_bytes"] {
            #expect(metrics.contains("# TYPE \(name) gauge\n"), "\(name) has no TYPE line")
            #expect(!metrics.contains("\(name){store=\"free\"}"), "the store without limits has \(name)")
        }
        #expect(metrics.contains("blobstore_store_waiting_puts{store=\"s\"} 0\n"), "\(metrics)")
        // The file store admits puts up to its limit plus a slack of one blob for a count of 2
        // (STORAGE.md, "Overshoot"); the in-memory store evicts as each put commits.
        let peak = try #require(Self.sample("blobstore_store_peak_blobs", store: "s", in: metrics))
        #expect(backend == "file" ? (2...3).contains(peak) : peak == 2, "peak \(peak)")
        #expect(Self.sample("blobstore_store_peak_bytes", store: "s", in: metrics) == peak * 2)
    }

    /// A put parked behind eviction shows as a waiting put (rendered from ``CacheCounters``).
    @Test func waitingPutsArePrintedPerStore() {
        let counters = CacheCounters(
            policy: StorePolicy(maximumBytes: 100), count: 3, bytes: 90, evicted: 0, expired: 0, peakCount: 4, peakBytes: 112, waitingPuts: 5)
        let text = String(decoding: PolicyCounters().render(limits: [("p", counters.policy)], cache: [("p", counters)]), as: UTF8.self)
        #expect(text.contains("blobstore_store_waiting_puts{store=\"p\"} 5\n"))
        #expect(text.contains("blobstore_store_peak_blobs{store=\"p\"} 4\n"))
        #expect(text.contains("blobstore_store_peak_bytes{store=\"p\"} 112\n"))
        #expect(text.contains("blobstore_store_max_bytes{store=\"p\"} 100\n"))
    }

    private static func sample(_ name: String, store: String, in metrics: String) -> Int? {
        let prefix = "\(name){store=\"\(store)\"} "
        guard let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return Int(line.dropFirst(prefix.count))
    }
}
