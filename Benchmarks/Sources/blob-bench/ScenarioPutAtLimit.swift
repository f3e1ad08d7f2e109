import BlobStore
import Foundation

/// `put-limit`: new 4 KiB blobs into a store held at its byte limit, so that every put has eviction
/// remove a blob in the background, against the same puts into an unlimited store holding as much
/// (issue 18's target: at least 0.8× the unlimited store's rate). Relaxed, 1 and 2 writers; the
/// ratio shows in the report's store/raw column, with the unlimited store in the raw place.
struct PutAtLimitScenario: Scenario {
    var name: String { "put-limit" }

    var summary: String {
        "put new 4 KiB blobs, relaxed: a store at its byte limit (evicting all the time) vs an unlimited store, ×1/×2 writers"
    }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let workload = Workload(blobBytes: BlobSize.small, count: context.count(4000, quick: 600))
        let fill = Workload(blobBytes: BlobSize.small, count: context.count(2000, quick: 300))
        let limit = Int64(fill.identifiers.count * BlobSize.small)
        var variants: [Variant] = []
        var comparisons: [Comparison] = []
        for writers in [1, 2] {
            variants.append(variant(workload, fill: fill, policy: .unlimited, writers: writers, name: "unlimited×\(writers)"))
            variants.append(variant(workload, fill: fill, policy: StorePolicy(maximumBytes: limit), writers: writers, name: "at-limit×\(writers)"))
            comparisons.append(Comparison(store: "at-limit×\(writers)", raw: "unlimited×\(writers)", article: nil))
        }
        return [
            try await context.measure(
                scenario: name, label: BlobSize.label(BlobSize.small), blobBytes: BlobSize.small, variants: variants, comparisons: comparisons)
        ]
    }

    /// A store under `policy`, filled (untimed) with `fill`, then timed putting `workload`.
    private func variant(_ workload: Workload, fill: Workload, policy: StorePolicy, writers: Int, name: String) -> Variant {
        Variant(.store, concurrency: writers, operations: workload.identifiers.count, name: name) { directory in
            let store = try PersistentDataStore(
                name: "bench", root: URL(fileURLWithPath: directory), configuration: StoreConfiguration(durability: .relaxed, policy: policy))
            try await Drivers.putAll(store, fill, writers: 1)
            return try await Timing.measure { try await Drivers.putAll(store, workload, writers: writers) }
        }
    }
}
