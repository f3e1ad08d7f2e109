import BlobStore
import Glibc

/// `overwrite-relaxed`: put over identifiers that already exist, whose old versions are on disk.
///
/// On this disk (ext4 mounted with `discard`) renaming over an existing file frees its blocks inside
/// `rename()`, which waits for a TRIM; the raw loop pays that per put. The store keeps the old
/// version linked and frees it later; the harness waits for that to finish (untimed) before the next
/// variant runs, so the deferred work does not land in the raw loop's window.
struct OverwriteScenario: Scenario {
    var name: String { "overwrite-relaxed" }
    var summary: String { "put over existing blobs (rename frees old blocks = TRIM here): store ×1 vs raw rename-over loop" }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let sizes = [
            (BlobSize.small, context.count(2000, quick: 300)),
            (BlobSize.medium, context.count(200, quick: 40)),
            (BlobSize.large, context.count(8, quick: 2)),
        ]
        var results: [CaseResult] = []
        for (bytes, count) in sizes {
            let workload = Workload(blobBytes: bytes, count: count)
            let label = BlobSize.label(bytes)
            // Populated once; every repetition overwrites the previous one's versions.
            let storeRoot = try context.folder("overwrite-store-\(bytes)")
            let plain = try context.folder("overwrite-plain-\(bytes)")
            let store = try Drivers.openStore(storeRoot, durability: .relaxed)
            try await Drivers.putAll(store, workload, writers: 2)
            _ = try await Drivers.rawPut(workload, durable: false, writers: 1, folder: plain).run(plain)
            let trash = storeRoot + "/bench/trash"
            let variants = [
                Drivers.storePut(workload, durability: .relaxed, writers: 1, existing: store) {
                    await Self.waitUntilEmpty(trash)
                },
                Drivers.rawPut(workload, durable: false, writers: 1, folder: plain),
            ]
            results.append(
                try await context.measure(
                    scenario: name, label: label, blobBytes: bytes, variants: variants,
                    comparisons: [Comparison(store: "store×1", raw: "raw×1", article: nil)]))
            Cleanup.release(storeRoot)
            Cleanup.release(plain)
        }
        return results
    }

    /// Waits (at most a minute) until the store has freed the replaced versions it parked in `folder`.
    /// Reads the store's on-disk layout: if that changes, this returns at once and the wait is skipped.
    static func waitUntilEmpty(_ folder: String) async {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard let entries = try? Files.entries(of: folder), !entries.isEmpty else { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
