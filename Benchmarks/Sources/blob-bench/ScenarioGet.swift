import BlobStore
import Foundation

/// `get`: whole-blob reads of existing blobs (warm page cache), store against raw open/read/close
/// and the article's `loadData`, with 1 and 2 concurrent readers each.
///
/// More variants explain the async API's figure: `queued` is the async API with every read sent
/// through the store's queue (`inlineCachedReads: false`, the article's design), `blocking` reads
/// through the store's blocking API (`openForReading` + `read`, what blobd's loops call) from
/// dedicated threads, and `hop` is an async round trip through a concurrent `DispatchQueue` that
/// does no work at all — the ceiling of any store whose async reads all run on a queue.
struct GetScenario: Scenario {
    var name: String { "get" }
    var summary: String { "get existing blobs (warm cache): store ×1/×2 readers vs raw open/read/close and the article's loadData" }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let cases = [
            (bytes: BlobSize.small, blobs: context.count(2000, quick: 500), gets: context.count(40_000, quick: 6000)),
            (bytes: BlobSize.medium, blobs: context.count(400, quick: 100), gets: context.count(4000, quick: 600)),
        ]
        var results: [CaseResult] = []
        for (bytes, blobs, gets) in cases {
            let workload = Workload(blobBytes: bytes, count: blobs)
            // Populated once and only read afterwards, so every repetition reads the same files.
            let storeRoot = try context.folder("get-store-\(bytes)")
            let store = try Drivers.openStore(storeRoot, durability: .relaxed)
            try await Drivers.putAll(store, workload, writers: 2)
            // The same engine (instances on one folder share it), every read through the queue.
            let queued = try PersistentDataStore(
                name: store.name, root: store.rootURL, configuration: .init(durability: .relaxed, inlineCachedReads: false))
            // The raw loop and the article read the same plain files: the article stores content as is.
            let articleRoot = try context.folder("get-article-\(bytes)")
            let article = try ArticleDataStore(name: "article", root: URL(fileURLWithPath: articleRoot))
            let plain = articleRoot + "/article"
            _ = try await Drivers.rawPut(workload, durable: false, writers: 1, folder: plain).run(plain)
            var variants: [Variant] = []
            var comparisons: [Comparison] = []
            for readers in [1, 2] {
                variants += [
                    Drivers.storeGet(workload, store: store, readers: readers, operations: gets),
                    Drivers.rawGet(workload, folder: plain, readers: readers, operations: gets),
                    Drivers.articleGet(workload, store: article, readers: readers, operations: gets),
                ]
                comparisons.append(Comparison(store: "store×\(readers)", raw: "raw×\(readers)", article: "article×\(readers)"))
                if bytes == BlobSize.small {
                    variants += [
                        Drivers.storeGet(workload, store: queued, readers: readers, operations: gets, name: "queued×\(readers)"),
                        Drivers.blockingGet(workload, store: store, readers: readers, operations: gets),
                        Drivers.emptyHop(readers: readers, operations: gets),
                    ]
                    comparisons += [
                        Comparison(store: "queued×\(readers)", raw: "raw×\(readers)", article: nil),
                        Comparison(store: "blocking×\(readers)", raw: "raw×\(readers)", article: nil),
                        Comparison(store: "hop×\(readers)", raw: "raw×\(readers)", article: nil),
                    ]
                }
                if bytes == BlobSize.small && readers == 2 {
                    // The async API with 16 gets in flight (as a server's tasks would have) against the
                    // raw loop on both cores: hand-offs overlap instead of each waiting for a wake-up.
                    variants.append(Drivers.storeGet(workload, store: store, readers: 16, operations: gets))
                    comparisons.append(Comparison(store: "store×16", raw: "raw×2", article: nil))
                }
            }
            results.append(
                try await context.measure(
                    scenario: name, label: BlobSize.label(bytes), blobBytes: bytes, variants: variants, comparisons: comparisons))
            Cleanup.release(storeRoot)
            Cleanup.release(articleRoot)
        }
        return results
    }
}
