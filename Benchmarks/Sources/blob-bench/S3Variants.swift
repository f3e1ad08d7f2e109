import Foundation
import Glibc

/// Builds the S3 scenarios' variants: the same closed-loop load generator, with the same number of
/// keep-alive connections and the same requests, driving either blobd on S3 (through its Unix
/// socket) or the gateway itself (over TCP, requests signed by ``S3Signer``).
enum S3Variants {
    /// Where a variant's requests go.
    enum Target: Sendable {
        /// blobd on S3: one server for the whole case, or one started for each run.
        case blobd(DaemonVariants.ServerSource)
        /// The gateway, directly.
        case gateway
    }

    /// One run's requests: the untimed warm-up, then the timed ones.
    typealias Plans = (warmup: RequestPlan, timed: RequestPlan)

    /// A variant that sends `plans(token)` (`token` is fresh per run) to `target` over `connections`
    /// connections, and then, untimed, calls `cleanup(token)` (deleting what a PUT run stored).
    static func http(
        name: String, kind: Variant.Kind, connections: Int, operations: Int, target: Target, gateway: S3Gateway, sink: S3CPUSink,
        latency: LatencySink, plans: @escaping @Sendable (_ token: String) -> Plans,
        cleanup: (@Sendable (_ token: String) async throws -> Void)? = nil
    ) -> Variant {
        Variant(kind, concurrency: connections, operations: operations, name: name, latency: latency) { directory in
            let token = RequestPlan.freshToken()
            var server: (any BenchServer)?
            switch target {
            case .blobd(.shared(let shared)): server = shared
            case .blobd(.perRun(let start)): server = try start(directory)
            case .gateway: server = nil
            }
            let elapsed: Duration
            do {
                defer { if case .blobd(.perRun) = target { server?.stop() } }
                let (warmup, timed) = plans(token)
                let generator =
                    if let server {
                        try LoadGenerator(socketPath: server.socketPath, connections: connections)
                    } else {
                        LoadGenerator(descriptors: try gateway.connect(connections))
                    }
                // Warm-up on the same connections: blobd opens its own connections to the gateway here.
                _ = try await generator.run(warmup)
                // As Timing.measure does: writeback left by the warm-up (blobd's cache files) is flushed untimed.
                sync()
                let blobdBefore = server.map { ProcessCPU.nanoseconds($0.processIDs) } ?? 0
                let gatewayBefore = ProcessCPU.nanoseconds(gateway.processIDs)
                let outcome = try await generator.run(timed)
                let gatewayUsed = ProcessCPU.nanoseconds(gateway.processIDs) &- gatewayBefore
                let blobdUsed = server.map { ProcessCPU.nanoseconds($0.processIDs) &- blobdBefore }
                let requests = Double(max(outcome.requests, 1))
                sink.record(
                    blobd: blobdUsed.map { Double($0) / requests / 1000 }, gateway: Double(gatewayUsed) / requests / 1000,
                    generator: Double(outcome.cpuNanoseconds) / requests / 1000)
                latency.record(outcome.latencies.map { Double($0) }, microsecondsPerUnit: 0.001)
                elapsed = outcome.elapsed
            }
            if let cleanup { try await cleanup(token) }
            return elapsed
        }
    }

    /// PUT of `workload`'s content under `prefix/bench/ID` for each of `identifiers`, signed; with
    /// `createOnly`, as `If-None-Match: *` (what blobd sends for a new blob).
    static func gatewayPuts(_ identifiers: [String], prefix: String, gateway: S3Gateway, workload: Workload, createOnly: Bool = false) -> RequestPlan {
        let signer = S3Signer(gateway)
        var headers = [("Content-Type", "application/octet-stream"), ("Content-Length", String(workload.content.count))]
        if createOnly { headers.append(("If-None-Match", "*")) }
        return RequestPlan(
            serialised: identifiers.map { identifier in
                (signer.head("PUT", bucket: gateway.bucket, key: key(prefix, identifier), headers: headers), true, -1)
            }, workload: workload)
    }

    /// GET of `prefix/bench/ID` for each of `identifiers`, signed; each answer must be `bytes` long.
    static func gatewayGets(_ identifiers: [String], prefix: String, gateway: S3Gateway, workload: Workload) -> RequestPlan {
        let signer = S3Signer(gateway)
        let bytes = workload.content.count
        return RequestPlan(
            serialised: identifiers.map { identifier in (signer.head("GET", bucket: gateway.bucket, key: key(prefix, identifier)), false, bytes) },
            workload: workload)
    }

    /// GET of each of `identifiers` from blobd's store `bench`.
    static func blobdGets(_ identifiers: [String], workload: Workload) -> RequestPlan {
        RequestPlan(identifiers.map { .get(identifier: $0, bytes: workload.content.count) }, workload: workload)
    }

    /// PUT of `workload`'s content under each of `identifiers` in blobd's store `bench`.
    static func blobdPuts(_ identifiers: [String], workload: Workload) -> RequestPlan {
        RequestPlan(identifiers.map { .put(identifier: $0) }, workload: workload)
    }

    /// Deletes `prefix/bench/ID` for each of `identifiers` at the gateway (untimed cleanup, 4 connections).
    static func delete(_ identifiers: [String], prefix: String, gateway: S3Gateway, workload: Workload) async throws {
        guard !identifiers.isEmpty else { return }
        let signer = S3Signer(gateway)
        let plan = RequestPlan(
            serialised: identifiers.map { identifier in (signer.head("DELETE", bucket: gateway.bucket, key: key(prefix, identifier)), false, -1) },
            workload: workload)
        _ = try await LoadGenerator(descriptors: try gateway.connect(4)).run(plan)
    }

    /// The object key of blob `identifier` of store `bench` under `prefix`, as blobd lays out its
    /// stores in a bucket (docs/SCALE-OUT.md): `PREFIX/STORE/ID`.
    static func key(_ prefix: String, _ identifier: String) -> String { prefix + "/bench/" + identifier }

    /// A key prefix no earlier run used: `bench-NAME-RANDOM`.
    static func freshPrefix(_ name: String) -> String { "bench-\(name)-" + RequestPlan.freshToken() }

    /// Untimed warm-up requests for a run of `operations`: enough for every connection to do a few.
    static func warmupCount(_ operations: Int) -> Int { min(2000, max(200, operations / 10)) }

    /// The gateway for scenario `name`, or nil (with the reason printed) when Ceph is not available.
    static func gateway(for name: String) async throws -> S3Gateway? {
        let found = Locked<Result<S3Gateway, any Error>?>(nil)
        try await Workers.run(1) { _ in
            found.withLock {
                $0 = Result {
                    // An older blobd (Benchmarks/scripts/compare-commits) has no S3 backend: skip, not fail.
                    try BenchDaemon.checkBlobd()
                    let help = try ChildProcess.output([BenchDaemon.blobdPath, "--help"])
                    guard help.output.contains("s3://") else {
                        throw S3Gateway.Unavailable(description: "\(BenchDaemon.blobdPath) has no S3 backend (its --help names no s3://)")
                    }
                    return try S3Gateway.start()
                }
            }
        }
        switch found.withLock({ $0 }) {
        case .success(let gateway): return gateway
        case .failure(let error as S3Gateway.Unavailable):
            Console.progress("\(name): skipped: \(error.description)")
            return nil
        case .failure(let error): throw error
        case nil: throw BenchFailure("\(name): the gateway did not start")
        }
    }

    /// Figures for a measured case: CPU per request of blobd, the gateway's daemons and the load
    /// generator for each variant, and the target ratios.
    static func figures(
        _ result: CaseResult, sinks: [(variant: String, sink: S3CPUSink)], targets: [(store: String, peer: String, minimum: Double?)]
    ) -> [Figure] {
        var figures: [Figure] = []
        for (variant, sink) in sinks {
            guard let medians = sink.medians else { continue }
            if let blobd = medians.blobd {
                figures.append(Figure(name: "\(result.label): \(variant) blobd CPU per request", value: blobd, unit: "µs"))
            }
            if medians.gateway > 0 {
                figures.append(Figure(name: "\(result.label): \(variant) Ceph (radosgw, OSD, monitor) CPU per request", value: medians.gateway, unit: "µs"))
            }
            figures.append(Figure(name: "\(result.label): \(variant) load generator CPU per request", value: medians.generator, unit: "µs"))
        }
        for target in targets {
            guard let ratio = result.comparisons.first(where: { $0.store == target.store && $0.peer == target.peer })?.storeOverPeer else {
                continue
            }
            figures.append(
                Figure(
                    name: "\(result.label): \(target.store) / \(target.peer)", value: ratio.median, unit: "×",
                    target: target.minimum.map { "≥ \(Report.fixed($0))×" }, met: target.minimum.map { ratio.median >= $0 }))
        }
        return figures
    }
}

/// CPU per request of one variant's runs: blobd's (when it is in the path), the Ceph daemons' and
/// the load generator's, microseconds.
final class S3CPUSink: Sendable {
    private let runs = Locked<[(blobd: Double?, gateway: Double, generator: Double)]>([])

    init() {}

    /// Records one run.
    func record(blobd: Double?, gateway: Double, generator: Double) { runs.withLock { $0.append((blobd, gateway, generator)) } }

    /// Medians over the runs, or nil if none.
    var medians: (blobd: Double?, gateway: Double, generator: Double)? {
        let all = runs.withLock { $0 }
        guard !all.isEmpty else { return nil }
        let blobd = all.compactMap(\.blobd)
        return (blobd.isEmpty ? nil : Stats.median(blobd), Stats.median(all.map(\.gateway)), Stats.median(all.map(\.generator)))
    }
}
