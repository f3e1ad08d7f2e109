import BlobStore

/// `list`: listing all of 10,000 blobs, by pages of 1,000 through the store, against readdir of a
/// plain folder holding files of the same names (the least any listing can cost).
///
/// One operation is one complete listing. The store's listing returns metadata (it reads each blob's
/// header); readdir returns names only, so the ratio shows what the metadata costs.
struct ListScenario: Scenario {
    var name: String { "list" }
    var summary: String { "list all of 10,000 blobs by pages of 1,000 (store) vs readdir of a plain folder (raw)" }

    static let blobCount = 10_000
    static let pageSize = 1000

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let workload = Workload(blobBytes: 256, count: Self.blobCount)
        let storeRoot = try context.folder("list-store")
        let plain = try context.folder("list-plain")
        let store = try Drivers.openStore(storeRoot, durability: .relaxed)
        try await Drivers.putAll(store, workload, writers: 2)
        _ = try await Drivers.rawPut(workload, durable: false, writers: 1, folder: plain).run(plain)

        let storeListings = context.count(5, quick: 2)
        let rawListings = context.count(50, quick: 10)
        let variants = [
            Variant(.store, concurrency: 1, operations: storeListings) { _ in
                try await Timing.measure {
                    for _ in 0..<storeListings {
                        var query = ListQuery(limit: Self.pageSize)
                        var seen = 0
                        while true {
                            let page = try await store.list(query)
                            seen += page.items.count
                            guard let next = page.nextCursor else { break }
                            query.cursor = next
                        }
                        guard seen == Self.blobCount else { throw BaselineFailure(count: Self.blobCount - seen) }
                    }
                }
            },
            Variant(.raw, concurrency: 1, operations: rawListings) { _ in
                try await Timing.measure {
                    try await Workers.run(1) { _ in
                        for _ in 0..<rawListings {
                            let names = try RawPOSIX.list(plain)
                            guard names.count == Self.blobCount else { throw BaselineFailure(count: Self.blobCount - names.count) }
                        }
                    }
                }
            },
        ]
        let result = try await context.measure(
            scenario: name, label: "10k blobs", blobBytes: 256, variants: variants,
            comparisons: [Comparison(store: "store×1", raw: "raw×1", article: nil)])
        Cleanup.release(storeRoot)
        Cleanup.release(plain)
        return [result]
    }
}
