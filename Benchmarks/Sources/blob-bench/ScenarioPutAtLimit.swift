import BlobStore
import Foundation
import Glibc

/// `put-limit`: new 4 KiB blobs into a store held at its byte limit, so that every put has eviction
/// remove a blob in the background, against the same puts into an unlimited store holding as much
/// (issue 18's target: at least 0.8× the unlimited store's rate). Relaxed, 1 and 2 writers; the
/// ratio shows in the report's store/raw column, with the unlimited store in the raw place.
///
/// Figures: the process's CPU time per put in each variant's timed part (every thread: the writers,
/// the committers, the cache queue), and their ratio unlimited / at-limit per repetition. On a machine
/// whose cores other programs keep busy, the rate ratio is what the CPU ratio allows; the CPU ratio
/// is the steadier of the two.
///
/// A third variant, `unlimited+unlink`, is the unlimited store whose writers also unlink one
/// prepared 4 KiB file after each put: the one file operation that eviction adds to a put and
/// that no eviction scheme avoids. At-limit against it shows what the rest of eviction (choosing
/// victims, committing the drops, the catalog) costs; it against the unlimited store, the ceiling
/// that the unlink alone sets.
struct PutAtLimitScenario: Scenario {
    var name: String { "put-limit" }

    var summary: String {
        "put new 4 KiB blobs, relaxed: a store at its byte limit (evicting all the time) vs an unlimited store, and an unlimited store that also unlinks a file per put, ×1/×2 writers"
    }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let workload = Workload(blobBytes: BlobSize.small, count: context.count(4000, quick: 600))
        let fill = Workload(blobBytes: BlobSize.small, count: context.count(2000, quick: 300))
        let limit = Int64(fill.identifiers.count * BlobSize.small)
        var variants: [Variant] = []
        var comparisons: [Comparison] = []
        let cpu = CPUPerOperation()
        for writers in [1, 2] {
            variants.append(variant(workload, fill: fill, policy: .unlimited, writers: writers, name: "unlimited×\(writers)", cpu: cpu))
            variants.append(variant(workload, fill: fill, policy: StorePolicy(maximumBytes: limit), writers: writers, name: "at-limit×\(writers)", cpu: cpu))
            variants.append(variant(workload, fill: fill, policy: .unlimited, writers: writers, name: "unlimited+unlink×\(writers)", cpu: cpu, unlinking: true))
            comparisons.append(Comparison(store: "at-limit×\(writers)", raw: "unlimited×\(writers)", article: nil))
            comparisons.append(Comparison(store: "unlimited+unlink×\(writers)", raw: "unlimited×\(writers)", article: nil))
            comparisons.append(Comparison(store: "at-limit×\(writers)", raw: "unlimited+unlink×\(writers)", article: nil))
        }
        var result = try await context.measure(
            scenario: name, label: BlobSize.label(BlobSize.small), blobBytes: BlobSize.small, variants: variants, comparisons: comparisons)
        for writers in [1, 2] {
            let free = cpu.samples("unlimited×\(writers)"), full = cpu.samples("at-limit×\(writers)")
            guard !free.isEmpty, free.count == full.count else { continue }
            result.figures.append(Figure(name: "CPU per put, unlimited×\(writers)", value: Stats.median(free), unit: "µs"))
            result.figures.append(Figure(name: "CPU per put, at-limit×\(writers)", value: Stats.median(full), unit: "µs"))
            let ratio = Stats.median(zip(free, full).map { $0 / max($1, 1e-9) })
            result.figures.append(
                Figure(name: "CPU per put, unlimited / at-limit ×\(writers) (median of repetitions)", value: ratio, unit: "×", target: "≥ 0.8", met: ratio >= 0.8))
            let unlinking = cpu.samples("unlimited+unlink×\(writers)")
            guard unlinking.count == free.count else { continue }
            result.figures.append(Figure(name: "CPU per put, unlimited+unlink×\(writers)", value: Stats.median(unlinking), unit: "µs"))
            let ceiling = Stats.median(zip(free, unlinking).map { $0 / max($1, 1e-9) })
            result.figures.append(
                Figure(name: "CPU per put, ceiling: unlimited / unlimited+unlink ×\(writers) (the unlink alone)", value: ceiling, unit: "×"))
            let rest = Stats.median(zip(unlinking, full).map { $0 / max($1, 1e-9) })
            result.figures.append(
                Figure(name: "CPU per put, unlimited+unlink / at-limit ×\(writers) (the rest of eviction)", value: rest, unit: "×"))
        }
        return [result]
    }

    /// A store under `policy`, filled (untimed) with `fill`, then timed putting `workload`; with
    /// `unlinking`, each writer also unlinks one of as many 4 KiB files (made untimed) after each put.
    private func variant(
        _ workload: Workload, fill: Workload, policy: StorePolicy, writers: Int, name: String, cpu: CPUPerOperation, unlinking: Bool = false
    ) -> Variant {
        Variant(.store, concurrency: writers, operations: workload.identifiers.count, name: name) { directory in
            let store = try PersistentDataStore(
                name: "bench", root: URL(fileURLWithPath: directory), configuration: StoreConfiguration(durability: .relaxed, policy: policy))
            try await Drivers.putAll(store, fill, writers: 1)
            var afterEach: (@Sendable (Int) throws -> Void)?
            if unlinking {
                let doomed = try Self.makeFiles(count: workload.identifiers.count, size: BlobSize.small, in: directory + "/doomed")
                afterEach = { index in
                    guard unlink(doomed[index]) == 0 else { throw RawPOSIX.Failure(operation: "unlink", path: doomed[index], code: errno) }
                }
            }
            var used: UInt64 = 0
            let elapsed = try await Timing.measure {
                let start = CPUPerOperation.processNanoseconds()
                defer { used = CPUPerOperation.processNanoseconds() - start }
                try await Drivers.putAll(store, workload, writers: writers, afterEach: afterEach)
            }
            cpu.record(name, microseconds: Double(used) / 1000 / Double(workload.identifiers.count))
            return elapsed
        }
    }
}

extension PutAtLimitScenario {
    /// Makes `count` files of `size` bytes in a new folder `folder`; returns their paths.
    static func makeFiles(count: Int, size: Int, in folder: String) throws -> [String] {
        guard mkdir(folder, 0o755) == 0 else { throw RawPOSIX.Failure(operation: "mkdir", path: folder, code: errno) }
        let content = [UInt8](repeating: 0x5A, count: size)
        let paths = (0..<count).map { folder + "/f\($0)" }
        for path in paths {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw RawPOSIX.Failure(operation: "open", path: path, code: errno) }
            defer { close(fd) }
            guard content.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) == size else {
                throw RawPOSIX.Failure(operation: "write", path: path, code: errno)
            }
        }
        return paths
    }
}

/// CPU time per operation of each run, by variant name, in the order of the repetitions.
final class CPUPerOperation: Sendable {
    private let recorded = Locked<[String: [Double]]>([:])

    /// CPU time used so far by every thread of this process, ended ones included (nanoseconds).
    static func processNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    func record(_ name: String, microseconds: Double) { recorded.withLock { $0[name, default: []].append(microseconds) } }

    func samples(_ name: String) -> [Double] { recorded.withLock { $0[name] ?? [] } }
}
