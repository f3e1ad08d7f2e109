@testable import BlobServer
import BlobStore
import Foundation
import Testing

/// blobd's memory tier: `--memory-tier` / `BLOBD_MEMORY_TIER`, GETs answered from it, and its figures in `/metrics`.
struct MemoryTierServingTests {
    private func configuration(_ arguments: [String], _ environment: [String: String] = [:]) -> ServerConfiguration? {
        if case .run(let configuration) = DaemonCommandLine.parse(arguments, environment: environment) { return configuration }
        return nil
    }

    @Test func theBudgetTakesBytesWithBinarySuffixes() {
        #expect(configuration([])?.memoryTierBytes == 64 << 20)
        #expect(configuration(["--memory-tier", "0"])?.memoryTierBytes == 0)
        #expect(configuration(["--memory-tier=4096"])?.memoryTierBytes == 4096)
        #expect(configuration(["--memory-tier", "512K"])?.memoryTierBytes == 512 << 10)
        #expect(configuration(["--memory-tier", "2g"])?.memoryTierBytes == 2 << 30)
        #expect(configuration(["--memory-tier", "1MiB"])?.memoryTierBytes == 1 << 20)
        #expect(configuration(["--memory-tier", "1T"])?.memoryTierBytes == 1 << 40)
        #expect(configuration([], ["BLOBD_MEMORY_TIER": "8M"])?.memoryTierBytes == 8 << 20)
        #expect(configuration(["--memory-tier", "1M"], ["BLOBD_MEMORY_TIER": "8M"])?.memoryTierBytes == 1 << 20)
        for bad in ["", "-1", "lots", "2X", "1025G", "M", "1.5M"] {
            guard case .usageError(let message) = DaemonCommandLine.parse(["--memory-tier", bad], environment: [:]) else {
                Issue.record("'\(bad)' accepted")
                continue
            }
            #expect(message == "--memory-tier " + DaemonCommandLine.byteCountProblem)
            #expect(message.contains("K, M, G or T"))
        }
    }

    private func sample(_ text: String, _ name: String, store: String) -> Int? {
        let prefix = "\(name){store=\"\(store)\"} "
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return Int(line.dropFirst(prefix.count))
    }

    @Test func repeatedGetsAreHitsInTheMetrics() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let body = (0..<4096).map { UInt8(truncatingIfNeeded: $0) }
        #expect(try client.request("PUT", "/v1/stores/t/blobs/hot", body: body).status == 201)
        for _ in 0..<3 {
            let response = try client.request("GET", "/v1/stores/t/blobs/hot")
            #expect(response.status == 200 && response.body == body)
        }
        var text = try client.request("GET", "/metrics").text
        for name in MemoryTierMetrics.families.map(\.name) { #expect(text.contains("# TYPE \(name) "), "\(name)") }
        #expect(sample(text, "blobstore_memory_tier_hits_total", store: "t") == 2)
        #expect(sample(text, "blobstore_memory_tier_misses_total", store: "t") == 1)
        #expect(sample(text, "blobstore_memory_tier_entries", store: "t") == 1)
        #expect(sample(text, "blobstore_memory_tier_budget_bytes", store: "t") == 64 << 20)
        #expect((sample(text, "blobstore_memory_tier_bytes", store: "t") ?? 0) > 4096)

        // A PUT drops the entry in its commit: the next GET reads the new version.
        let replaced = Array(repeating: UInt8(9), count: 100)
        #expect(try client.request("PUT", "/v1/stores/t/blobs/hot", body: replaced).status == 200)
        #expect(try client.request("GET", "/v1/stores/t/blobs/hot").body == replaced)
        #expect(try client.request("DELETE", "/v1/stores/t/blobs/hot").status == 204)
        #expect(try client.request("GET", "/v1/stores/t/blobs/hot").status == 404)
        text = try client.request("GET", "/metrics").text
        #expect(sample(text, "blobstore_memory_tier_invalidations_total", store: "t") == 2)
        #expect(sample(text, "blobstore_memory_tier_entries", store: "t") == 0)
    }

    @Test func zeroTurnsItOff() throws {
        let daemon = try DaemonProcess(extraArguments: ["--memory-tier", "0"])
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/t/blobs/a", body: [1, 2, 3]).status == 201)
        for _ in 0..<2 { #expect(try client.request("GET", "/v1/stores/t/blobs/a").body == [1, 2, 3]) }
        let text = try client.request("GET", "/metrics").text
        #expect(sample(text, "blobstore_memory_tier_budget_bytes", store: "t") == 0)
        #expect(sample(text, "blobstore_memory_tier_hits_total", store: "t") == 0)
        #expect(sample(text, "blobstore_memory_tier_misses_total", store: "t") == 0)
    }

    @Test func oneBudgetBoundsTheTiersOfEveryStoreServed() throws {
        // 64 KiB: about 14 entries of 4 KiB for all stores together, where 3 stores of 12 hot blobs
        // each would hold 36 with a budget per store.
        let budget = 64 << 10
        let daemon = try DaemonProcess(extraArguments: ["--memory-tier", "64K"])
        let client = try daemon.connect()
        let stores = ["a", "b", "c"]
        let body = (0..<4096).map { UInt8(truncatingIfNeeded: $0) }
        for store in stores {
            for index in 0..<12 { #expect(try client.request("PUT", "/v1/stores/\(store)/blobs/\(index)", body: body).status == 201) }
        }
        for _ in 0..<3 {
            for store in stores {
                for index in 0..<12 { #expect(try client.request("GET", "/v1/stores/\(store)/blobs/\(index)").body == body) }
            }
        }
        let text = try client.request("GET", "/metrics").text
        var held = 0
        var evictions = 0
        for store in stores {
            #expect(sample(text, "blobstore_memory_tier_budget_bytes", store: store) == budget)
            held += try #require(sample(text, "blobstore_memory_tier_bytes", store: store))
            evictions += try #require(sample(text, "blobstore_memory_tier_evictions_total", store: store))
        }
        #expect(held > 0 && held <= budget, "the three tiers hold \(held) bytes together, budget \(budget)")
        #expect(evictions > 0)
    }
}
