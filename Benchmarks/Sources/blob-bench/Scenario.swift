import Glibc

/// A named benchmark: it prepares its data, measures its variants side by side, and returns one
/// result per case (a case is typically one blob size).
protocol Scenario: Sendable {
    /// The name used on the command line and in reports.
    var name: String { get }
    /// One line for `--list`.
    var summary: String { get }
    /// Runs every case under `context.root` (a fresh folder the harness removes afterwards).
    func run(_ context: ScenarioContext) async throws -> [CaseResult]
}

/// Every scenario, in the order a full run goes through them.
enum Catalogue {
    static let all: [any Scenario] = [
        PutScenario(durability: .relaxed),
        PutScenario(durability: .durable),
        OverwriteScenario(),
        PutAtLimitScenario(),
        GetScenario(),
        MemoryTierScenario(),
        ListScenario(),
        DaemonGetScenario(),
        DaemonPutScenario(),
        DaemonMixedScenario(),
        MemoryScenario(),
        // Issue 19: blobd on S3 against the Ceph gateway directly (each brings up its own cluster).
        S3PutScenario(bytes: 4 << 10, connections: 16),
        S3PutScenario(bytes: 4 << 20, connections: 4),
        S3GetColdScenario(),
        S3GetHitScenario(),
        // Last: freeing its million files takes minutes and slows file creation for minutes after.
        ScaleScenario(),
    ]
}

/// One way of doing a case's work (the store, a raw loop, the article's store), timed once per repetition.
struct Variant: Sendable {
    /// What is being measured; ratios are always store over a baseline.
    enum Kind: String, Codable, Sendable {
        case store, raw, article
        /// Another server doing the same work (nginx, Redis), driven by the same load generator.
        case peer
    }

    /// Shown in reports, e.g. `store×2`.
    var name: String
    var kind: Kind
    /// Writers or readers running at once.
    var concurrency: Int
    /// Operations done in one timed run (ops/s = operations / time).
    var operations: Int
    /// Runs once per repetition in `directory`, a fresh empty folder removed afterwards. Untimed setup
    /// goes before ``Timing/measure(_:)``; the returned duration is the timed part only.
    var run: @Sendable (_ directory: String) async throws -> Duration
    /// Where a run that times each request leaves its latency percentiles (daemon scenarios); read
    /// after every run.
    var latency: LatencySink?

    init(
        _ kind: Kind, concurrency: Int, operations: Int, name: String? = nil, latency: LatencySink? = nil,
        run: @escaping @Sendable (_ directory: String) async throws -> Duration
    ) {
        self.name = name ?? "\(kind.rawValue)×\(concurrency)"
        self.kind = kind
        self.concurrency = concurrency
        self.operations = operations
        self.latency = latency
        self.run = run
    }
}

/// Which variants a store variant's ratios are taken against (by name; `nil` for none).
struct Comparison: Sendable {
    var store: String
    var raw: String?
    var article: String?
    /// A peer server's variant (daemon scenarios).
    var peer: String? = nil
}

/// Clock helpers for variants.
enum Timing {
    /// Times `body`. First (untimed) flushes dirty pages, so writeback left over from the previous
    /// variant or from setup does not land in this one's window, and files written in setup really
    /// occupy blocks on disk (which matters for overwrites: freeing blocks costs a TRIM here).
    static func measure(_ body: () async throws -> Void) async rethrows -> Duration {
        sync()
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return start.duration(to: clock.now)
    }
}

/// What a scenario gets from the harness: settings, a folder, and the interleaved measuring loop.
struct ScenarioContext: Sendable {
    /// Short counts for CI.
    let quick: Bool
    /// Repetitions of every variant.
    let repetitions: Int
    /// A fresh folder for this scenario.
    let root: String

    /// `normal` counts, or `quick` ones in quick mode.
    func count(_ normal: Int, quick: Int) -> Int { self.quick ? quick : normal }

    /// Creates (if needed) and returns the folder `root/name`.
    func folder(_ name: String) throws -> String {
        let path = root + "/" + name
        try Files.makeDirectories(path)
        return path
    }

    /// Measures `variants` interleaved (A, B, C, A, B, C, …) so that machine drift hits all of them
    /// alike, each run in a fresh folder (emptied afterwards, see ``Cleanup``). Ratios are taken per
    /// repetition, between runs seconds apart, before taking their median.
    func measure(
        scenario: String, label: String, blobBytes: Int?, variants: [Variant], comparisons: [Comparison]
    ) async throws -> CaseResult {
        var samples = Array(repeating: [Double](), count: variants.count)
        var latencies = Array(repeating: [LatencySink.Percentiles](), count: variants.count)
        let caseFolder = try folder(label.filter { $0.isLetter || $0.isNumber })
        InodeSpreading.mark(caseFolder)
        for repetition in 0..<repetitions {
            var line = "[\(scenario) \(label)] \(repetition + 1)/\(repetitions):"
            for (index, variant) in variants.enumerated() {
                // A random part in the name: ext4 picks the group of a +T folder's child from a hash of its
                // name, so fixed names would land on the groups the previous run just emptied.
                let directory = caseFolder + "/r\(repetition)v\(index)-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
                try Files.makeDirectories(directory)
                let elapsed = try await variant.run(directory)
                Cleanup.release(directory)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                let rate = Double(variant.operations) / max(seconds, 1e-9)
                samples[index].append(rate)
                line += " \(variant.name) \(Report.compact(rate))"
                if let percentiles = variant.latency?.take() {
                    latencies[index].append(percentiles)
                    line += " (p50 \(Report.compact(percentiles.p50)) µs, p99 \(Report.compact(percentiles.p99)) µs)"
                }
            }
            Console.progress(line)
        }
        let results = variants.indices.map { index in
            let variant = variants[index]
            let rates = samples[index]
            let measured = latencies[index]
            return VariantResult(
                name: variant.name, kind: variant.kind, concurrency: variant.concurrency, operations: variant.operations,
                opsPerSecond: Stats.median(rates), samples: rates,
                p50Microseconds: measured.isEmpty ? nil : Stats.median(measured.map(\.p50)),
                p99Microseconds: measured.isEmpty ? nil : Stats.median(measured.map(\.p99)))
        }
        func rates(_ name: String?) -> [Double]? {
            guard let name else { return nil }
            return results.first { $0.name == name }?.samples
        }
        let compared = comparisons.map { comparison in
            let store = rates(comparison.store) ?? []
            /// Per-repetition ratios: each pair ran back to back, so they share that moment's machine state.
            func ratio(_ baseline: [Double]?) -> Stats.Summary? {
                guard let baseline, baseline.count == store.count, !store.isEmpty else { return nil }
                return Stats.summary(zip(store, baseline).map { $0 / max($1, 1e-12) })
            }
            return ComparisonResult(
                store: comparison.store, raw: comparison.raw, article: comparison.article, peer: comparison.peer,
                storeOverRaw: ratio(rates(comparison.raw)), storeOverArticle: ratio(rates(comparison.article)),
                storeOverPeer: ratio(rates(comparison.peer)))
        }
        return CaseResult(scenario: scenario, label: label, blobBytes: blobBytes, variants: results, comparisons: compared)
    }
}
