import BlobStore
import Foundation
import Glibc
import Synchronization

/// `memtier`: the file store's memory tier (STORAGE.md, "Memory tier").
///
/// - **hot 4 KiB**: whole-blob gets of a hot set that fits the tier (1,000 blobs of 4 KiB in the
///   default 8 MiB), async and through the blocking `content(of:)`, against the raw open/read/close
///   loop over the same content as plain files, and against the same engine with the tier off
///   (`memoryTierBytes: 0`, which still serves from the page cache on the caller's thread). Every
///   blob is read once before the timed runs, so they measure hits.
/// - **stream-through**: figures, not rates: the process's RSS while a working set 10× the tier's
///   budget (16 MiB) is read through it twice, against its RSS before, with the target "growth ≤
///   budget + 16 MiB"; and the tier's charged bytes and evictions after.
struct MemoryTierScenario: Scenario {
    var name: String { "memtier" }
    var summary: String { "memory tier: hot 4 KiB gets vs raw open/read/close and the tier off; RSS while 10× the budget streams through" }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        [try await hot(context), try await streamThrough(context)]
    }

    private func hot(_ context: ScenarioContext) async throws -> CaseResult {
        let workload = Workload(blobBytes: BlobSize.small, count: context.count(1000, quick: 500))
        let gets = context.count(100_000, quick: 20_000)
        let storeRoot = try context.folder("memtier-store")
        let store = try Drivers.openStore(storeRoot, durability: .relaxed)
        try await Drivers.putAll(store, workload, writers: 2)
        // The same engine; this instance does not use the tier (the page cache still answers inline).
        let off = try PersistentDataStore(name: store.name, root: store.rootURL, configuration: .init(durability: .relaxed, memoryTierBytes: 0))
        for identifier in workload.identifiers { _ = try await store.get(identifier) }
        let plain = try context.folder("memtier-plain")
        _ = try await Drivers.rawPut(workload, durable: false, writers: 1, folder: plain).run(plain)
        var variants: [Variant] = []
        var comparisons: [Comparison] = []
        for readers in [1, 2] {
            variants += [
                Drivers.storeGet(workload, store: store, readers: readers, operations: gets, name: "tier×\(readers)"),
                MemoryTierScenario.blockingContent(workload, store: store, readers: readers, operations: gets),
                Drivers.storeGet(workload, store: off, readers: readers, operations: gets, name: "tier-off×\(readers)"),
                Drivers.rawGet(workload, folder: plain, readers: readers, operations: gets),
            ]
            comparisons += [
                Comparison(store: "tier×\(readers)", raw: "raw×\(readers)", article: nil),
                Comparison(store: "content(of:)×\(readers)", raw: "raw×\(readers)", article: nil),
                Comparison(store: "tier-off×\(readers)", raw: "raw×\(readers)", article: nil),
            ]
        }
        var result = try await context.measure(
            scenario: name, label: "hot 4 KiB", blobBytes: BlobSize.small, variants: variants, comparisons: comparisons)
        let figures = store.memoryTierStatistics
        result.figures.append(Figure(name: "hot 4 KiB: tier hits / (hits + misses)", value: Double(figures.hits) / Double(max(1, figures.hits + figures.misses)), unit: "ratio"))
        if let ratio = result.comparisons.first(where: { $0.store == "tier×1" })?.storeOverRaw?.median {
            result.figures.append(Figure(name: "hot 4 KiB: tier×1 / raw×1", value: ratio, unit: "×", target: "≥ 3", met: ratio >= 3))
        }
        Cleanup.release(storeRoot)
        Cleanup.release(plain)
        return result
    }

    /// Gets through the blocking `content(of:)` on `readers` threads of their own.
    static func blockingContent(_ workload: Workload, store: PersistentDataStore, readers: Int, operations: Int) -> Variant {
        Variant(.store, concurrency: readers, operations: operations, name: "content(of:)×\(readers)") { _ in
            let expected = workload.data.count
            let identifiers = workload.identifiers
            return try await Timing.measure {
                let failures = FailureCount()
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let done = DispatchGroup()
                    for reader in 0..<readers {
                        done.enter()
                        Thread {
                            defer { done.leave() }
                            for index in stride(from: reader, to: operations, by: readers) {
                                guard let data = try? store.content(of: identifiers[index % identifiers.count]), data.count == expected else {
                                    failures.count.wrappingAdd(1, ordering: .relaxed)
                                    return
                                }
                            }
                        }.start()
                    }
                    done.notify(queue: .global()) { continuation.resume() }
                }
                let failed = failures.count.load(ordering: .relaxed)
                if failed > 0 { throw BaselineFailure(count: failed) }
            }
        }
    }

    private func streamThrough(_ context: ScenarioContext) async throws -> CaseResult {
        let budget = 16 << 20
        let count = context.count(40_000, quick: 40_000)  // 10× the budget in 4 KiB blobs
        let workload = Workload(blobBytes: BlobSize.small, count: count)
        let root = try context.folder("memtier-stream")
        let store = try PersistentDataStore(
            name: "bench", root: URL(fileURLWithPath: root), configuration: .init(durability: .relaxed, memoryTierBytes: budget))
        try await Drivers.putAll(store, workload, writers: 2)
        // One get of something first, so whatever a first get allocates once is in the baseline.
        _ = try await store.get(workload.identifiers[0])
        let before = ProcMemory(pid: getpid())?.residentBytes ?? 0
        var peak = before
        for pass in 0..<2 {
            for (index, identifier) in workload.identifiers.enumerated() {
                _ = try await store.get(identifier)
                if index % 500 == 0 { peak = max(peak, ProcMemory(pid: getpid())?.residentBytes ?? 0) }
            }
            _ = pass
        }
        peak = max(peak, ProcMemory(pid: getpid())?.residentBytes ?? 0)
        let figures = store.memoryTierStatistics
        let mib = { (bytes: Int) in Double(bytes) / Double(1 << 20) }
        let growth = mib(peak - before)
        let limit = mib(budget) + 16
        let result = CaseResult(
            scenario: name, label: "stream-through", blobBytes: BlobSize.small, variants: [], comparisons: [],
            figures: [
                Figure(name: "stream-through: working set read twice (4 KiB blobs)", value: mib(count * BlobSize.small), unit: "MiB"),
                Figure(name: "stream-through: tier budget", value: mib(budget), unit: "MiB"),
                Figure(name: "stream-through: RSS before the reads", value: mib(before), unit: "MiB"),
                Figure(name: "stream-through: RSS growth, peak over before", value: growth, unit: "MiB", target: "≤ budget + 16 MiB", met: growth <= limit),
                Figure(name: "stream-through: tier charged bytes after", value: mib(figures.bytes), unit: "MiB"),
                Figure(name: "stream-through: tier entries after", value: Double(figures.entries), unit: "blobs"),
                Figure(name: "stream-through: evictions", value: Double(figures.evictions), unit: "entries"),
            ])
        Cleanup.release(root)
        return result
    }
}

/// Failed reads of the threads of one run.
private final class FailureCount: Sendable {
    let count = Atomic<Int>(0)
}
