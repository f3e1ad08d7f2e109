import Foundation
import Glibc

/// blobd as a ``BenchServer``: a ``BenchDaemon`` child, also registered with ``ChildReaper`` so an
/// interrupted run does not leave it behind.
final class BlobdServer: BenchServer, @unchecked Sendable {
    // @unchecked: all stored properties are constants.

    let daemon: BenchDaemon
    var socketPath: String { daemon.socketPath }
    var processIDs: [pid_t] { [daemon.pid] }

    /// Starts blobd on `root` with `--durability durability`, its default 2 event loops and `arguments`.
    init(root: String, socketPath: String, durability: String, arguments: [String] = []) throws {
        daemon = try BenchDaemon(root: root, socketPath: socketPath, arguments: ["--durability", durability] + arguments)
        ChildReaper.track(daemon.pid, group: false)
    }

    func stop() {
        daemon.stop()
        ChildReaper.untrack(daemon.pid)
    }
}

/// A private folder for the servers' Unix sockets: short (sockets paths are limited to 107 bytes,
/// and `--dir` may be long) and mode 0700 (blobd refuses a group- or world-writable socket folder).
final class SocketHome: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/bbd-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BenchFailure("mkdtemp: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
        ChildReaper.removeOnSignal(path)
    }

    /// A socket path in the folder; `name` should be unique per server started.
    func socket(_ name: String) -> String {
        let socket = path + "/" + name + ".sock"
        ChildReaper.removeOnSignal(socket)
        return socket
    }

    /// Removes the folder (servers remove their sockets; anything left goes too).
    func remove() {
        try? Files.removeTree(path)
        ChildReaper.keep(under: path)
    }
}

/// What each run of a variant measured besides its rate, for the figures under the table: server
/// and load-generator CPU per request, and (nginx) how its workers shared the connections.
final class CPUSink: Sendable {
    private let runs = Locked<[(server: Double, generator: Double)]>([])
    private let shares = Locked<[Double]>([])

    init() {}

    /// Records one run: server and load-generator CPU, microseconds per request.
    func record(server: Double, generator: Double) { runs.withLock { $0.append((server, generator)) } }

    /// Records the share of the connections that the busiest nginx worker got in one run.
    func record(busiestWorkerShare: Double) { shares.withLock { $0.append(busiestWorkerShare) } }

    /// Median of the recorded busiest-worker shares, or nil if none.
    var busiestWorkerShare: Double? {
        let all = shares.withLock { $0 }
        return all.isEmpty ? nil : Stats.median(all)
    }

    /// Medians over the runs, or nil if none.
    var medians: (server: Double, generator: Double)? {
        let all = runs.withLock { $0 }
        guard !all.isEmpty else { return nil }
        return (Stats.median(all.map(\.server)), Stats.median(all.map(\.generator)))
    }
}

extension LatencySink {
    /// Records percentiles another tool computed (redis-benchmark), in microseconds.
    ///
    /// The sink only takes raw samples; 51 copies of p50 followed by 49 of p99 are the smallest
    /// sample whose 50th and 99th percentiles, as ``record(_:microsecondsPerUnit:)`` takes them
    /// (index ⌊n·q⌋ of the sorted values), are exactly these two.
    func record(p50: Double, p99: Double) {
        record(Array(repeating: p50, count: 51) + Array(repeating: p99, count: 49))
    }
}

/// Builds the daemon scenarios' variants: one server (blobd or nginx) under the shared load
/// generator, or redis-benchmark against Redis.
enum DaemonVariants {
    /// Where a variant's server comes from: one started for the whole case (GET, mixed: populated
    /// once), or one started in each run's fresh folder and stopped after it (PUT: every run starts
    /// from an empty store, like the embedded put scenarios).
    enum ServerSource: Sendable {
        case shared(any BenchServer)
        case perRun(@Sendable (_ directory: String) throws -> any BenchServer)
    }

    /// A variant that drives `server` with `connections` connections: `plans(token)` gives the
    /// untimed warm-up and the timed requests of one run (`token` is fresh per run, for new identifiers).
    static func http(
        name: String, kind: Variant.Kind, connections: Int, operations: Int, server source: ServerSource, latency: LatencySink,
        cpu: CPUSink, plans: @escaping @Sendable (_ token: String) -> (warmup: RequestPlan, timed: RequestPlan)
    ) -> Variant {
        Variant(kind, concurrency: connections, operations: operations, name: name, latency: latency) { directory in
            let server: any BenchServer
            switch source {
            case .shared(let shared): server = shared
            case .perRun(let start): server = try start(directory)
            }
            defer { if case .perRun = source { server.stop() } }
            let (warmup, timed) = plans(RequestPlan.freshToken())
            let nginx = server as? NginxServer
            let socketsBefore = nginx?.workerSockets()
            let generator = try LoadGenerator(socketPath: server.socketPath, connections: connections)
            // Warm-up on the same connections: first-request costs (the server's per-connection
            // buffers, page faults, the store's first open) stay out of the timed window.
            _ = try await generator.run(warmup)
            if let nginx, let socketsBefore {
                let accepted = zip(nginx.workerSockets(), socketsBefore).map { $0 - $1 }
                if accepted.reduce(0, +) == connections { cpu.record(busiestWorkerShare: Double(accepted.max() ?? 0) / Double(connections)) }
            }
            // As Timing.measure does: writeback left by the previous run or by the warm-up is flushed untimed.
            sync()
            let cpuBefore = ProcessCPU.nanoseconds(server.processIDs)
            let outcome = try await generator.run(timed)
            let cpuAfter = ProcessCPU.nanoseconds(server.processIDs)
            let requests = Double(max(outcome.requests, 1))
            cpu.record(
                server: Double(cpuAfter &- cpuBefore) / requests / 1000, generator: Double(outcome.cpuNanoseconds) / requests / 1000)
            latency.record(outcome.latencies.map { Double($0) }, microsecondsPerUnit: 0.001)
            return outcome.elapsed
        }
    }

    /// `redis-benchmark -t test -d size -c clients -n operations` against `server`: a peer row with
    /// its own load generator (so not a same-generator comparison; docs/BENCHMARKS.md says so).
    /// `-t get` first stores the key (untimed), so every GET returns `size` bytes.
    static func redis(
        name: String, test: String, size: Int, clients: Int, operations: Int, server: RedisServer, latency: LatencySink, cpu: CPUSink
    ) -> Variant {
        Variant(.peer, concurrency: clients, operations: operations, name: name, latency: latency) { _ in
            let result = Locked<(RedisServer.Result, UInt64)?>(nil)
            try await Workers.run(1) { _ in
                if test == "get" { _ = try server.benchmark(test: "set", size: size, clients: 1, requests: 100) }
                sync()
                let before = ProcessCPU.nanoseconds([server.pid])
                let measured = try server.benchmark(test: test, size: size, clients: clients, requests: operations)
                let used = ProcessCPU.nanoseconds([server.pid]) &- before
                result.withLock { $0 = (measured, used) }
            }
            guard let value = result.withLock({ $0 }) else { throw BenchFailure("redis-benchmark gave no result") }
            let (measured, used) = value
            latency.record(p50: measured.p50Milliseconds * 1000, p99: measured.p99Milliseconds * 1000)
            // The generator's CPU is redis-benchmark's own, not measured here.
            cpu.record(server: Double(used) / Double(operations) / 1000, generator: .nan)
            return .nanoseconds(Int64(Double(operations) / measured.requestsPerSecond * 1e9))
        }
    }

    /// Requests `0..<count` of a run: PUT of a new identifier where `isPut(i)`, else GET of
    /// `existing[i % existing.count]`.
    static func plan(
        _ count: Int, workload: Workload, existing: [String], token: String, tag: String, isPut: (Int) -> Bool
    ) -> RequestPlan {
        let size = workload.content.count
        let operations: [RequestPlan.Operation] = (0..<count).map { index in
            isPut(index) ? .put(identifier: "\(token)-\(tag)\(index)") : .get(identifier: existing[index % existing.count], bytes: size)
        }
        return RequestPlan(operations, workload: workload)
    }

    /// Stores every identifier of `workload` in blobd through the load generator (untimed setup).
    static func populate(_ server: any BenchServer, _ workload: Workload) async throws {
        let generator = try LoadGenerator(socketPath: server.socketPath, connections: 4)
        let plan = RequestPlan(workload.identifiers.map { .put(identifier: $0) }, workload: workload)
        _ = try await generator.run(plan)
    }

    /// Writes every blob of `workload` as a plain file in `folder`: what nginx serves for the same paths.
    static func writePlainFiles(_ workload: Workload, in folder: String) throws {
        try Files.makeDirectories(folder)
        for identifier in workload.identifiers {
            try Files.write(workload.content, to: folder + "/" + identifier)
        }
    }

    /// Figures for a measured case: each variant's server CPU per request, the load generator's,
    /// and the targets for blobd against nginx.
    static func figures(
        _ result: CaseResult, sinks: [(variant: String, cpu: CPUSink)], targets: [(store: String, peer: String, minimum: Double)],
        latencyTarget: (store: String, peer: String)? = nil
    ) -> [Figure] {
        var figures: [Figure] = []
        var generator: [Double] = []
        for (variant, sink) in sinks {
            guard let medians = sink.medians else { continue }
            figures.append(Figure(name: "\(result.label): \(variant) server CPU per request", value: medians.server, unit: "µs"))
            if !medians.generator.isNaN { generator.append(medians.generator) }
            if let share = sink.busiestWorkerShare {
                figures.append(Figure(name: "\(result.label): \(variant) connections on the busiest of 2 workers", value: share * 100, unit: "%"))
            }
        }
        if !generator.isEmpty {
            figures.append(
                Figure(
                    name: "\(result.label): load generator CPU per request (\(LoadGenerator.Mode.configured), median over variants)",
                    value: Stats.median(generator), unit: "µs"))
        }
        for target in targets {
            guard let comparison = result.comparisons.first(where: { $0.store == target.store && $0.peer == target.peer }),
                let ratio = comparison.storeOverPeer
            else { continue }
            figures.append(
                Figure(
                    name: "\(result.label): \(target.store) / \(target.peer)", value: ratio.median, unit: "×",
                    target: "≥ \(Report.fixed(target.minimum))×", met: ratio.median >= target.minimum))
        }
        if let latencyTarget,
            let store = result.variants.first(where: { $0.name == latencyTarget.store })?.p99Microseconds,
            let peer = result.variants.first(where: { $0.name == latencyTarget.peer })?.p99Microseconds
        {
            figures.append(
                Figure(
                    name: "\(result.label): p99 \(latencyTarget.store) / p99 \(latencyTarget.peer)", value: store / max(peer, 1e-9),
                    unit: "×", target: "≤ 1.00×", met: store <= peer))
        }
        return figures
    }

    /// Prints why a peer is missing (once per scenario) and returns nil; or returns the value.
    static func available<T>(_ lookup: Result<T, BenchFailure>, scenario: String) -> T? {
        switch lookup {
        case .success(let value): return value
        case .failure(let reason):
            Console.progress("\(scenario): \(reason.description); measuring without it")
            return nil
        }
    }
}
