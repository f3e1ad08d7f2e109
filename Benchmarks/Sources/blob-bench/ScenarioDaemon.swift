import CBenchShim
import Foundation

// The daemon scenarios: blobd (the product's binary, 2 event loops) against nginx serving
// the same paths from plain files, driven by the same load generator over the same kind of socket,
// interleaved run by run; Redis (with its own redis-benchmark) as an extra reference for small
// values. Each timed run is a fixed number of requests. See docs/BENCHMARKS.md, "Daemon scenarios".

/// Counts shared by the daemon scenarios.
private enum DaemonCounts {
    /// Untimed warm-up requests per run: enough for every connection to have done a few.
    static func warmup(_ operations: Int) -> Int { min(2000, max(200, operations / 10)) }
}

extension ScenarioContext {
    /// A new folder `root/name-RANDOM` for a server that lives through a whole case.
    ///
    /// The scenario root has ext4's `+T` flag (see ``InodeSpreading``), so a child's block group is
    /// picked from a hash of its name: the random part sends each case's server to a different group
    /// rather than back to the one the previous run just emptied. The folder itself is deliberately
    /// *not* marked: below a `+T` folder, fixed names such as the store's `bench` or nginx's `www`
    /// would again hash to the same group every run. Unmarked, they stay in this folder's group.
    /// (With the store root marked, blobd's temp-file creates spent much of its CPU in ext4's
    /// `recently_deleted` scan, and the mixed scenario slowed down accordingly.)
    func spreadFolder(_ name: String) throws -> String {
        try folder(name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36))
    }
}

/// `daemon-get`: GET of existing blobs, 4 KiB over 16 connections and 1 MiB over 4.
struct DaemonGetScenario: Scenario {
    var name: String { "daemon-get" }
    var summary: String { "blobd GET 4 KiB ×16 and 1 MiB ×4 connections vs nginx and a least-work floor server (same generator) and redis-benchmark GET" }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let nginx = DaemonVariants.available(Peers.nginx.map(\.path), scenario: name)
        let redis = DaemonVariants.available(Peers.redis, scenario: name)
        let sockets = try SocketHome()
        defer { sockets.remove() }
        let cases = [
            (bytes: BlobSize.small, connections: 16, blobs: context.count(1000, quick: 300), gets: context.count(60_000, quick: 20_000)),
            (bytes: 1 << 20, connections: 4, blobs: context.count(64, quick: 32), gets: context.count(3000, quick: 1000)),
        ]
        var results: [CaseResult] = []
        for (bytes, connections, blobs, gets) in cases {
            let label = "\(BlobSize.label(bytes)) ×\(connections)"
            let workload = Workload(blobBytes: bytes, count: blobs)
            var servers: [any BenchServer] = []
            var redisServer: RedisServer?
            defer {
                for server in servers { server.stop() }
                redisServer?.stop()
            }
            let blobd = try BlobdServer(root: try context.spreadFolder("blobd"), socketPath: sockets.socket("d\(bytes)"), durability: "relaxed")
            servers.append(blobd)
            try await DaemonVariants.populate(blobd, workload)
            let identifiers = workload.identifiers
            let plans: @Sendable (String) -> (warmup: RequestPlan, timed: RequestPlan) = { token in
                (
                    DaemonVariants.plan(DaemonCounts.warmup(gets), workload: workload, existing: identifiers, token: token, tag: "w") { _ in false },
                    DaemonVariants.plan(gets, workload: workload, existing: identifiers, token: token, tag: "") { _ in false }
                )
            }
            let store = "blobd×\(connections)"
            var sinks = [(variant: store, cpu: CPUSink())]
            var variants = [
                DaemonVariants.http(
                    name: store, kind: .store, connections: connections, operations: gets, server: .shared(blobd),
                    latency: LatencySink(), cpu: sinks[0].cpu, plans: plans)
            ]
            var comparisons = [Comparison(store: store, raw: nil, article: nil)]
            let tierOff = "blobd-tier-off×\(connections)"
            if bytes == BlobSize.small {
                // The same daemon without its memory tier: every GET opens, reads and closes the file.
                let server = try BlobdServer(
                    root: try context.spreadFolder("blobd-tier-off"), socketPath: sockets.socket("o\(bytes)"), durability: "relaxed",
                    arguments: ["--memory-tier", "0"])
                servers.append(server)
                try await DaemonVariants.populate(server, workload)
                sinks.append((tierOff, CPUSink()))
                variants.append(
                    DaemonVariants.http(
                        name: tierOff, kind: .store, connections: connections, operations: gets, server: .shared(server),
                        latency: LatencySink(), cpu: sinks[sinks.count - 1].cpu, plans: plans))
            }
            // The same blobs as plain files, for nginx and for the floor server.
            let plainFolder = try context.spreadFolder("plain")
            try DaemonVariants.writePlainFiles(workload, in: plainFolder + "/www")
            let floor = "floor×\(connections)"
            let floorServer = try FloorHTTPServer(directory: plainFolder + "/www", socketPath: sockets.socket("f\(bytes)"))
            servers.append(floorServer)
            sinks.append((floor, CPUSink()))
            variants.append(
                DaemonVariants.http(
                    name: floor, kind: .peer, connections: connections, operations: gets, server: .shared(floorServer),
                    latency: LatencySink(), cpu: sinks[sinks.count - 1].cpu, plans: plans))
            if let nginx {
                let folder = try context.spreadFolder("nginx")
                let server = try NginxServer(binary: nginx, prefix: folder, directory: plainFolder + "/www", socketPath: sockets.socket("n\(bytes)"))
                servers.append(server)
                let peer = "nginx×\(connections)"
                sinks.append((peer, CPUSink()))
                variants.append(
                    DaemonVariants.http(
                        name: peer, kind: .peer, connections: connections, operations: gets, server: .shared(server),
                        latency: LatencySink(), cpu: sinks[sinks.count - 1].cpu, plans: plans))
                // The floor server against nginx: the most any server reached here in the same run.
                comparisons = [Comparison(store: store, raw: nil, article: nil, peer: peer), Comparison(store: floor, raw: nil, article: nil, peer: peer)]
                if bytes == BlobSize.small { comparisons.append(Comparison(store: tierOff, raw: nil, article: nil, peer: peer)) }
            }
            comparisons.append(Comparison(store: store, raw: nil, article: nil, peer: floor))
            if let redis, bytes == BlobSize.small {
                let server = try RedisServer(
                    server: redis.server, benchmark: redis.benchmark, folder: try context.spreadFolder("redis"), socketPath: sockets.socket("r\(bytes)"))
                redisServer = server
                let peer = "redis GET×16"
                sinks.append((peer, CPUSink()))
                variants.append(
                    DaemonVariants.redis(
                        name: peer, test: "get", size: bytes, clients: 16, operations: gets, server: server, latency: LatencySink(),
                        cpu: sinks[sinks.count - 1].cpu))
                comparisons.append(Comparison(store: store, raw: nil, article: nil, peer: peer))
            }
            var result = try await context.measure(
                scenario: name, label: label, blobBytes: bytes, variants: variants, comparisons: comparisons)
            let peer = "nginx×\(connections)"
            let target = bytes == BlobSize.small ? 1.5 : 1.3
            result.figures += DaemonVariants.figures(
                result, sinks: sinks, targets: [(store, peer, target)], latencyTarget: bytes == BlobSize.small ? (store, peer) : nil)
            if let ceiling = result.comparisons.first(where: { $0.store == floor && $0.peer == peer })?.storeOverPeer {
                result.figures.append(
                    Figure(
                        name: "\(label): ceiling: \(floor) / \(peer) (least-work server; below \(Report.fixed(target))× means the target is out of reach here)",
                        value: ceiling.median, unit: "×"))
            }
            if let share = result.comparisons.first(where: { $0.store == store && $0.peer == floor })?.storeOverPeer {
                result.figures.append(Figure(name: "\(label): \(store) / \(floor) (what the store's work costs)", value: share.median, unit: "×"))
            }
            results.append(result)
        }
        return results
    }
}

/// `daemon-put`: PUT of new 4 KiB blobs over 16 connections, blobd durable and relaxed, nginx
/// WebDAV, and redis-benchmark SET. Every server is started fresh in each run's folder.
struct DaemonPutScenario: Scenario {
    var name: String { "daemon-put" }
    var summary: String { "blobd PUT 4 KiB ×16 connections, durable and relaxed, vs nginx WebDAV PUT (same generator) and redis-benchmark SET" }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let nginx = DaemonVariants.available(Peers.nginxWithPut, scenario: name)
        let redis = DaemonVariants.available(Peers.redis, scenario: name)
        let sockets = try SocketHome()
        defer { sockets.remove() }
        let bytes = BlobSize.small
        let connections = 16
        let puts = context.count(10_000, quick: 4000)
        let workload = Workload(blobBytes: bytes, count: 1)
        let plans: @Sendable (String) -> (warmup: RequestPlan, timed: RequestPlan) = { token in
            (
                DaemonVariants.plan(DaemonCounts.warmup(puts), workload: workload, existing: [], token: token, tag: "w") { _ in true },
                DaemonVariants.plan(puts, workload: workload, existing: [], token: token, tag: "") { _ in true }
            )
        }
        let started = Locked(0)
        /// A socket name no earlier run of this scenario used.
        @Sendable func socket(_ prefix: String) -> String {
            sockets.socket(prefix + String(started.withLock { value in
                value += 1
                return value
            }))
        }
        var sinks: [(variant: String, cpu: CPUSink)] = []
        var variants: [Variant] = []
        var comparisons: [Comparison] = []
        let peer = "nginx×\(connections)"
        for durability in ["durable", "relaxed"] {
            let store = "blobd \(durability)×\(connections)"
            let sink = CPUSink()
            sinks.append((store, sink))
            variants.append(
                DaemonVariants.http(
                    name: store, kind: .store, connections: connections, operations: puts,
                    server: .perRun { directory in try BlobdServer(root: directory + "/blobd", socketPath: socket("d"), durability: durability) },
                    latency: LatencySink(), cpu: sink, plans: plans))
            comparisons.append(Comparison(store: store, raw: nil, article: nil, peer: nginx == nil ? nil : peer))
        }
        if let nginx {
            let sink = CPUSink()
            sinks.append((peer, sink))
            variants.append(
                DaemonVariants.http(
                    name: peer, kind: .peer, connections: connections, operations: puts,
                    server: .perRun { directory in
                        try NginxServer(binary: nginx, prefix: directory + "/nginx", directory: directory + "/nginx/www", socketPath: socket("n"))
                    },
                    latency: LatencySink(), cpu: sink, plans: plans))
        }
        var redisServer: RedisServer?
        defer { redisServer?.stop() }
        if let redis {
            let server = try RedisServer(
                server: redis.server, benchmark: redis.benchmark, folder: try context.folder("redis"), socketPath: sockets.socket("r"))
            redisServer = server
            let name = "redis SET×16"
            let sink = CPUSink()
            sinks.append((name, sink))
            variants.append(
                DaemonVariants.redis(
                    name: name, test: "set", size: bytes, clients: 16, operations: context.count(40_000, quick: 15_000), server: server,
                    latency: LatencySink(), cpu: sink))
            comparisons.append(Comparison(store: "blobd relaxed×\(connections)", raw: nil, article: nil, peer: name))
        }
        // The file work alone, as a ceiling: a raw POSIX loop on 2 threads doing what any server must
        // do per PUT (create a temp file, write, close, rename into place), with no HTTP and no load
        // generator taking CPU. A server can only approach it.
        let rawWorkload = Workload(blobBytes: bytes, count: puts)
        variants.append(Drivers.rawPut(rawWorkload, durable: false, writers: 2))
        if nginx != nil { comparisons.append(Comparison(store: "raw×2", raw: nil, article: nil, peer: peer)) }
        var result = try await context.measure(
            scenario: name, label: "\(BlobSize.label(bytes)) ×\(connections)", blobBytes: bytes, variants: variants, comparisons: comparisons)
        result.figures += DaemonVariants.figures(
            result, sinks: sinks,
            targets: [("blobd durable×\(connections)", peer, 1.0), ("blobd relaxed×\(connections)", peer, 2.0)])
        if let ceiling = result.comparisons.first(where: { $0.store == "raw×2" && $0.peer == peer })?.storeOverPeer {
            result.figures.append(
                Figure(
                    name: "\(result.label): ceiling: raw file work ×2 (no HTTP) / \(peer) (below 2.00× means the relaxed target is out of reach here)",
                    value: ceiling.median, unit: "×"))
        }
        // Durable: an acknowledged batch waits for two device flushes in turn (the content before the
        // rename makes it visible, the folder after it), and 16 connections put at most 16 requests in
        // one batch, so 16 / (2 × flush time) bounds a server that keeps the durability promise here.
        let flush = try DurableCeiling.medianFlushSeconds(folder: try context.folder("flush"), files: connections, size: bytes)
        result.figures.append(
            Figure(name: "\(result.label): syncfs after \(connections) new 4 KiB files (median of \(DurableCeiling.rounds))", value: flush * 1e6, unit: "µs"))
        if let nginxRate = result.variants.first(where: { $0.name == peer })?.opsPerSecond {
            result.figures.append(
                Figure(
                    name: "\(result.label): ceiling: \(connections) puts per 2 flushes / \(peer) (below 1.00× means the durable target is out of reach here)",
                    value: Double(connections) / (2 * flush) / nginxRate, unit: "×"))
        }
        return [result]
    }
}

/// `daemon-mixed`: 90% GET of existing / 10% PUT of new 4 KiB blobs over 16 connections, blobd
/// durable and relaxed against nginx.
struct DaemonMixedScenario: Scenario {
    var name: String { "daemon-mixed" }
    var summary: String { "blobd 90% GET / 10% PUT of 4 KiB ×16 connections, durable and relaxed, vs nginx (same generator)" }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let nginx = DaemonVariants.available(Peers.nginxWithPut, scenario: name)
        let sockets = try SocketHome()
        defer { sockets.remove() }
        let bytes = BlobSize.small
        let connections = 16
        let requests = context.count(30_000, quick: 12_000)
        let workload = Workload(blobBytes: bytes, count: context.count(1000, quick: 300))
        let identifiers = workload.identifiers
        // Every tenth request is a PUT, spread evenly over each thread's share of the plan.
        let plans: @Sendable (String) -> (warmup: RequestPlan, timed: RequestPlan) = { token in
            (
                DaemonVariants.plan(
                    DaemonCounts.warmup(requests), workload: workload, existing: identifiers, token: token, tag: "w") { $0 % 10 == 9 },
                DaemonVariants.plan(requests, workload: workload, existing: identifiers, token: token, tag: "") { $0 % 10 == 9 }
            )
        }
        var servers: [any BenchServer] = []
        defer { for server in servers { server.stop() } }
        var sinks: [(variant: String, cpu: CPUSink)] = []
        var variants: [Variant] = []
        var comparisons: [Comparison] = []
        let peer = "nginx×\(connections)"
        for durability in ["durable", "relaxed"] {
            let server = try BlobdServer(
                root: try context.spreadFolder("blobd-\(durability)"), socketPath: sockets.socket("d-\(durability)"), durability: durability)
            servers.append(server)
            try await DaemonVariants.populate(server, workload)
            let store = "blobd \(durability)×\(connections)"
            let sink = CPUSink()
            sinks.append((store, sink))
            variants.append(
                DaemonVariants.http(
                    name: store, kind: .store, connections: connections, operations: requests, server: .shared(server),
                    latency: LatencySink(), cpu: sink, plans: plans))
            comparisons.append(Comparison(store: store, raw: nil, article: nil, peer: nginx == nil ? nil : peer))
        }
        if let nginx {
            let folder = try context.spreadFolder("nginx")
            try DaemonVariants.writePlainFiles(workload, in: folder + "/www")
            let server = try NginxServer(binary: nginx, prefix: folder, directory: folder + "/www", socketPath: sockets.socket("n"))
            servers.append(server)
            let sink = CPUSink()
            sinks.append((peer, sink))
            variants.append(
                DaemonVariants.http(
                    name: peer, kind: .peer, connections: connections, operations: requests, server: .shared(server),
                    latency: LatencySink(), cpu: sink, plans: plans))
        }
        var result = try await context.measure(
            scenario: name, label: "\(BlobSize.label(bytes)) ×\(connections) 90/10", blobBytes: bytes, variants: variants,
            comparisons: comparisons)
        result.figures += DaemonVariants.figures(result, sinks: sinks, targets: [])
        return [result]
    }
}

/// The device-flush bound on durable puts: how long `syncfs` takes after a batch of new files.
enum DurableCeiling {
    static let rounds = 30

    /// Median over ``rounds`` of the time `syncfs` takes after `files` new files of `size` bytes
    /// (create, write, close; untimed) in `folder`. Blocking: runs on the calling thread.
    static func medianFlushSeconds(folder: String, files: Int, size: Int) throws -> Double {
        let content = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        content.initializeMemory(as: UInt8.self, repeating: 0x5A)
        defer { content.deallocate() }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw SystemError.current("open", folder) }
        defer { close(directory) }
        sync()
        var seconds: [Double] = []
        for round in 0..<rounds {
            for index in 0..<files {
                try Files.write(UnsafeRawBufferPointer(content), to: "\(folder)/\(round)-\(index)", exclusive: true)
            }
            let start = ContinuousClock.now
            guard cbench_syncfs(directory) == 0 else { throw SystemError.current("syncfs", folder) }
            let elapsed = ContinuousClock.now - start
            seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return Stats.median(seconds)
    }
}
