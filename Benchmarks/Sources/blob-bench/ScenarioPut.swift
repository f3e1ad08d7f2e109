import BlobStore

/// `put-relaxed` and `put-durable`: N new blobs per run, store against a raw loop and the article's store.
///
/// Relaxed: 1 and 2 writers, each baseline with the same number of writers. Durable: 1 and 16
/// writers; the raw fsync loop stays single-threaded (the target is "≥ 3× a raw loop that fsyncs
/// each blob", which group commit should beat), the article gets 1 and 16 writers.
struct PutScenario: Scenario {
    let durability: Durability

    var name: String { durability == .relaxed ? "put-relaxed" : "put-durable" }

    var summary: String {
        durability == .relaxed
            ? "put new blobs, no fsync: store ×1/×2 writers vs raw open/write/close/rename and the article's store"
            : "put new blobs, durable: store ×1/×16 writers vs a raw loop with fsync of file and folder, and the article's store"
    }

    /// Blob sizes and blobs per run, scaled so each size costs about the same time.
    private func cases(_ context: ScenarioContext) -> [(bytes: Int, count: Int)] {
        switch durability {
        case .relaxed:
            return [
                (BlobSize.small, context.count(4000, quick: 600)),
                (BlobSize.medium, context.count(400, quick: 60)),
                (BlobSize.large, context.count(12, quick: 2)),
            ]
        case .durable:
            return [
                (BlobSize.small, context.count(1000, quick: 200)),
                (BlobSize.medium, context.count(200, quick: 32)),
                (BlobSize.large, context.count(16, quick: 2)),
            ]
        }
    }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        var results: [CaseResult] = []
        for (bytes, count) in cases(context) {
            let workload = Workload(blobBytes: bytes, count: count)
            let durable = durability == .durable
            let many = durable ? 16 : 2
            var variants = [
                Drivers.storePut(workload, durability: durability, writers: 1),
                Drivers.storePut(workload, durability: durability, writers: many),
                Drivers.rawPut(workload, durable: durable, writers: 1),
            ] + (durable ? [] : [Drivers.rawPut(workload, durable: false, writers: many)]) + [
                Drivers.articlePut(workload, writers: 1),
                Drivers.articlePut(workload, writers: many),
            ]
            var comparisons = [
                Comparison(store: "store×1", raw: "raw×1", article: "article×1"),
                Comparison(store: "store×\(many)", raw: durable ? "raw×1" : "raw×\(many)", article: "article×\(many)"),
            ]
            if !durable && bytes == BlobSize.small {
                // The store's own put path from plain threads, without the async API's hand-offs.
                for writers in [1, many] {
                    variants.append(Drivers.blockingPut(workload, durability: durability, writers: writers))
                    comparisons.append(Comparison(store: "blocking×\(writers)", raw: "raw×\(writers)", article: nil))
                }
                // The ceiling for the async API: the raw loop with the same hand-off to a queue per put.
                variants.append(Drivers.rawPutThroughQueue(workload, writers: 1))
                comparisons.append(Comparison(store: "raw-hop×1", raw: "raw×1", article: nil))
                comparisons.append(Comparison(store: "store×1", raw: "raw-hop×1", article: nil))
                // From a `.high` task: the store hops to its user-initiated I/O queue, in that task's pool.
                variants.append(Drivers.storePut(workload, durability: durability, writers: 1, priority: .high, name: "high×1"))
                comparisons.append(Comparison(store: "high×1", raw: "raw×1", article: nil))
            }
            results.append(
                try await context.measure(
                    scenario: name, label: BlobSize.label(bytes), blobBytes: bytes, variants: variants, comparisons: comparisons))
        }
        return results
    }
}
