import Foundation
import Glibc

/// `memory`: the daemon's memory under two loads that must not grow it.
///
/// 1. **Streaming.** A 4 GiB blob (256 MiB with `--quick`) is PUT with `Content-Length` (the client
///    sends one reused 1 MiB pattern buffer over and over, never a file) and then read back with GET
///    (the client discards the bytes after checking them against the pattern and counting them).
///    The daemon's VmRSS is sampled every 50 ms during each transfer, and its VmHWM read at the end.
///    Target: ≤ 64 MiB.
/// 2. **Idle connections.** 1,000 connections (200 with `--quick`), each making one request and then
///    held open (keep-alive). Daemon RSS before and after, and its thread count. Targets: ≤ +32 MiB,
///    ≤ 8 threads. While they are held, a new connection must still get a normal GET answered.
///
/// Each part runs its own fresh daemon (relaxed durability: syncing 4 GiB would only add time), so
/// the stream's leftovers do not count against the connections' baseline.
struct MemoryScenario: Scenario {
    var name: String { "memory" }
    var summary: String {
        "daemon RSS while a 4 GiB blob streams in (PUT) and out (GET); RSS and threads with 1,000 idle keep-alive connections"
    }

    static let patternBytes = 1 << 20
    static let memoryTarget = 64.0
    static let connectionGrowthTarget = 32.0
    static let threadTarget = 8

    /// Runs both parts, each with its own daemon; one result holding every figure.
    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let streamBytes: Int64 = context.quick ? 256 << 20 : 4 << 30
        var connections = context.count(1000, quick: 200)
        let limit = FileLimit.raise(to: connections + 512)
        if limit < connections + 64 {
            connections = max(1, limit - 64)
            Console.progress("[memory] the open-file limit is \(limit): holding only \(connections) connections")
        }
        let root = try context.folder("daemon")
        if let space = DiskSpace(path: root), let missing = space.shortfall(bytes: streamBytes + (1 << 30), inodes: 1000) {
            Console.progress("[memory] streaming skipped: \(missing)")
            return [
                CaseResult(
                    scenario: name, label: "daemon", blobBytes: nil, variants: [], comparisons: [],
                    figures: [Figure(name: "skipped: the stream \(missing)", value: 0, unit: "-")]
                        + (try await idle(root: root + "/idle", connections: connections)))
            ]
        }
        var figures = try await stream(root: root + "/stream", bytes: streamBytes)
        figures += try await idle(root: root + "/idle", connections: connections)
        return [CaseResult(scenario: name, label: "daemon", blobBytes: nil, variants: [], comparisons: [], figures: figures)]
    }

    // MARK: - Streaming

    /// Streams a blob of `bytes` in and out of a fresh daemon on `root`, sampling its memory.
    private func stream(root: String, bytes: Int64) async throws -> [Figure] {
        let size = Self.sizeLabel(bytes)
        let pattern = Workload(blobBytes: Self.patternBytes, count: 0)
        /// What the streaming thread measured.
        struct Outcome: Sendable {
            var idle: ProcMemory
            var putPeak: Int
            var putSamples: Int
            var putSeconds: Double
            var getPeak: Int
            var getSamples: Int
            var getSeconds: Double
            var end: ProcMemory
        }
        let outcome = try await DedicatedThread.run { () throws -> Outcome in
            try Self.withDaemon(root: root) { daemon in
                let client = try ProbeClient(path: daemon.socketPath, bufferBytes: Self.patternBytes)
                defer { client.close() }
                // Warm-up: the store opened and the put and get paths run once, so the baseline is a working daemon's.
                let small = UnsafeRawBufferPointer(rebasing: pattern.content[..<1024])
                try Self.put(client, "/v1/stores/stream/blobs/warm-up", small.count) { try client.send(small) }
                guard try client.exchange(.get, "/v1/stores/stream/blobs/warm-up").head.status == 200 else {
                    throw BenchFailure("the warm-up GET failed")
                }
                guard let idle = ProcMemory(pid: daemon.pid) else { throw BenchFailure("the daemon is gone") }
                sync()
                let clock = ContinuousClock()

                var sampler = RSSSampler(pid: daemon.pid)
                var started = clock.now
                try Self.put(client, "/v1/stores/stream/blobs/big", bytes) {
                    var left = bytes
                    while left > 0 {
                        let count = Int(min(left, Int64(pattern.content.count)))
                        try client.send(UnsafeRawBufferPointer(rebasing: pattern.content[..<count]))
                        left -= Int64(count)
                    }
                }
                let putSeconds = ChildRun.milliseconds(started.duration(to: clock.now)) / 1000
                let put = sampler.stop()
                Console.progress("[memory] PUT \(size): \(Report.fixed(putSeconds)) s, daemon RSS max \(Self.mib(put.peakBytes)) MiB")
                // Writeback of the stream would only slow the GET; memory is what is measured.
                sync()

                sampler = RSSSampler(pid: daemon.pid)
                started = clock.now
                try client.sendHead("GET", "/v1/stores/stream/blobs/big")
                let head = try client.readHead()
                guard head.status == 200, head.contentLength == bytes else {
                    throw BenchFailure("GET of the \(size) blob: status \(head.status), Content-Length \(head.contentLength)")
                }
                var offset: Int64 = 0
                var mismatches = 0
                let received = try client.readBody(bytes) { piece in
                    mismatches += Self.compare(piece, at: offset, with: pattern.content)
                    offset += Int64(piece.count)
                }
                let getSeconds = ChildRun.milliseconds(started.duration(to: clock.now)) / 1000
                let get = sampler.stop()
                guard received == bytes, offset == bytes, mismatches == 0 else {
                    throw BenchFailure("GET of the \(size) blob returned \(offset) bytes, \(mismatches) differing pieces")
                }
                Console.progress("[memory] GET \(size): \(Report.fixed(getSeconds)) s, daemon RSS max \(Self.mib(get.peakBytes)) MiB")
                guard let end = ProcMemory(pid: daemon.pid) else { throw BenchFailure("the daemon is gone") }
                // Frees the space now (the daemon's reclaim queue unlinks it); a failure only leaves it to the harness.
                _ = try? client.exchange(.delete, "/v1/stores/stream/blobs/big")
                return Outcome(
                    idle: idle, putPeak: put.peakBytes, putSamples: put.samples, putSeconds: putSeconds, getPeak: get.peakBytes,
                    getSamples: get.samples, getSeconds: getSeconds, end: end)
            }
        }
        let target = "≤ \(Int(Self.memoryTarget)) MiB"
        let mebibytes = Double(bytes) / 1_048_576
        return [
            Figure(name: "daemon RSS idle (after a warm-up PUT and GET of 1 KiB)", value: Self.mibValue(outcome.idle.residentBytes), unit: "MiB"),
            Figure(
                name: "daemon RSS max while \(size) streams in (PUT; \(outcome.putSamples) samples, 50 ms apart)",
                value: Self.mibValue(outcome.putPeak), unit: "MiB", target: target, met: Self.mibValue(outcome.putPeak) <= Self.memoryTarget),
            Figure(
                name: "daemon RSS max while \(size) streams out (GET; \(outcome.getSamples) samples)",
                value: Self.mibValue(outcome.getPeak), unit: "MiB", target: target, met: Self.mibValue(outcome.getPeak) <= Self.memoryTarget),
            Figure(
                name: "daemon peak RSS over the whole stream test (VmHWM)", value: Self.mibValue(outcome.end.peakResidentBytes), unit: "MiB",
                target: target, met: Self.mibValue(outcome.end.peakResidentBytes) <= Self.memoryTarget),
            Figure(name: "  PUT \(size) throughput", value: mebibytes / max(outcome.putSeconds, 1e-9), unit: "MiB/s"),
            Figure(name: "  GET \(size) throughput (byte count and content checked)", value: mebibytes / max(outcome.getSeconds, 1e-9), unit: "MiB/s"),
        ]
    }

    /// Sends a PUT of `length` bytes to `target` (the body written by `sendBody`) and checks its answer.
    private static func put(_ client: ProbeClient, _ target: String, _ length: some BinaryInteger, sendBody: () throws -> Void) throws {
        try client.sendHead("PUT", target, bodyLength: Int64(length), fields: [("Content-Type", "application/octet-stream")])
        try sendBody()
        let head = try client.readHead()
        let body = try client.readBodyBytes(head.contentLength)
        guard head.status == 201 || head.status == 200 else {
            throw BenchFailure("PUT \(target): status \(head.status): \(String(decoding: body, as: UTF8.self))")
        }
    }

    /// How many bytes of `piece`, which starts at content offset `offset`, differ from the repeated
    /// `pattern` (0 or 1 per contiguous run compared: a count of bad pieces, not of bytes).
    private static func compare(_ piece: UnsafeRawBufferPointer, at offset: Int64, with pattern: UnsafeRawBufferPointer) -> Int {
        var mismatches = 0
        var done = 0
        while done < piece.count {
            let position = Int((offset + Int64(done)) % Int64(pattern.count))
            let count = min(piece.count - done, pattern.count - position)
            if memcmp(piece.baseAddress! + done, pattern.baseAddress! + position, count) != 0 { mismatches += 1 }
            done += count
        }
        return mismatches
    }

    // MARK: - Idle connections

    /// Holds `connections` idle keep-alive connections to a fresh daemon on `root`; its memory,
    /// threads, and whether a newcomer is still served.
    private func idle(root: String, connections: Int) async throws -> [Figure] {
        /// What the connections thread measured.
        struct Outcome: Sendable {
            var before: ProcMemory
            var held: ProcMemory
            var afterClose: ProcMemory?
            var reportedOpen: Int?
            var probeMilliseconds: Double?
            var probeError: String?
        }
        let outcome = try await DedicatedThread.run { () throws -> Outcome in
            try Self.withDaemon(root: root) { daemon in
                let blob = [UInt8](repeating: 0x5A, count: 1024)
                do {
                    let warm = try ProbeClient(path: daemon.socketPath)
                    defer { warm.close() }
                    try Self.put(warm, "/v1/stores/idle/blobs/probe", blob.count) { try blob.withUnsafeBytes { try warm.send($0) } }
                    guard try warm.exchange(.get, "/v1/stores/idle/blobs/probe").head.status == 200 else {
                        throw BenchFailure("the warm-up GET failed")
                    }
                }
                usleep(200_000)
                guard let before = ProcMemory(pid: daemon.pid) else { throw BenchFailure("the daemon is gone") }
                var held: [ProbeClient] = []
                held.reserveCapacity(connections)
                defer { for client in held { client.close() } }
                for index in 0..<connections {
                    let client = try ProbeClient(path: daemon.socketPath, bufferBytes: 4096)
                    let status = try client.exchange(.get, "/v1/health").head.status
                    guard status == 200 else { throw BenchFailure("health check on connection \(index): status \(status)") }
                    held.append(client)
                }
                // Let the loops finish whatever the last requests left (and the allocator settle).
                usleep(300_000)
                guard let heldStatus = ProcMemory(pid: daemon.pid) else { throw BenchFailure("the daemon is gone") }

                // A normal request from a newcomer while all of them are held.
                var probeMilliseconds: Double?
                var probeError: String?
                var reportedOpen: Int?
                do {
                    let clock = ContinuousClock()
                    let started = clock.now
                    let probe = try ProbeClient(path: daemon.socketPath)
                    defer { probe.close() }
                    let (head, body) = try probe.exchange(.get, "/v1/stores/idle/blobs/probe")
                    if head.status == 200, body == blob {
                        probeMilliseconds = ChildRun.milliseconds(started.duration(to: clock.now))
                    } else {
                        probeError = "status \(head.status), \(body.count) bytes"
                    }
                    let metrics = try probe.exchange(.get, "/metrics")
                    reportedOpen = Self.gauge("blobd_open_connections", in: metrics.body)
                } catch {
                    probeError = "\(error)"
                }
                for client in held { client.close() }
                held.removeAll()
                usleep(300_000)
                return Outcome(
                    before: before, held: heldStatus, afterClose: ProcMemory(pid: daemon.pid), reportedOpen: reportedOpen,
                    probeMilliseconds: probeMilliseconds, probeError: probeError)
            }
        }
        let growth = Self.mibValue(outcome.held.residentBytes - outcome.before.residentBytes)
        let count = Self.countLabel(connections)
        Console.progress(
            "[memory] \(count) idle connections: RSS \(Self.mib(outcome.before.residentBytes)) → \(Self.mib(outcome.held.residentBytes)) MiB, "
                + "\(outcome.held.threads) threads, newcomer's GET " + (outcome.probeMilliseconds.map { "\(Report.compact($0)) ms" } ?? "FAILED"))
        var figures = [
            Figure(name: "daemon RSS before the idle connections (after a warm-up PUT and GET)", value: Self.mibValue(outcome.before.residentBytes), unit: "MiB"),
            Figure(name: "daemon RSS with \(count) idle keep-alive connections (one GET /v1/health each)", value: Self.mibValue(outcome.held.residentBytes), unit: "MiB"),
            Figure(
                name: "  growth for \(count) idle connections (\(Report.compact(growth * 1024 / Double(connections))) KiB each)", value: growth, unit: "MiB",
                target: "≤ +\(Int(Self.connectionGrowthTarget)) MiB", met: growth <= Self.connectionGrowthTarget),
            Figure(
                name: "daemon threads with \(count) connections held (\(outcome.before.threads) before)", value: Double(outcome.held.threads), unit: "threads",
                target: "≤ \(Self.threadTarget)", met: outcome.held.threads <= Self.threadTarget),
            Figure(
                name: "a newcomer's GET of 1 KiB while \(count) are held" + (outcome.probeError.map { " FAILED: \($0)" } ?? " (connect + request + response)"),
                value: outcome.probeMilliseconds ?? 0, unit: "ms", target: "answered", met: outcome.probeMilliseconds != nil),
        ]
        if let open = outcome.reportedOpen {
            figures.append(Figure(name: "  blobd_open_connections reported by /metrics meanwhile", value: Double(open), unit: "connections"))
        }
        if let after = outcome.afterClose {
            figures.append(Figure(name: "daemon RSS after the \(count) closed", value: Self.mibValue(after.residentBytes), unit: "MiB"))
        }
        return figures
    }

    /// The value of an unlabelled gauge in Prometheus text.
    private static func gauge(_ name: String, in body: [UInt8]) -> Int? {
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    // MARK: - Helpers

    /// Runs `body` with a fresh daemon on `root` (relaxed durability) listening in a new short socket
    /// folder; stops the daemon and removes the folder afterwards. Blocking.
    private static func withDaemon<T>(root: String, _ body: (BenchDaemon) throws -> T) throws -> T {
        let socketFolder = "/tmp/bbm-\(getpid())-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        defer { ScaleScenario.removeSocketFolder(socketFolder) }
        let daemon = try BenchDaemon(root: root, socketPath: socketFolder + "/d.sock", arguments: ["--durability", "relaxed"])
        defer { daemon.stop() }
        return try body(daemon)
    }

    /// `4 GiB`, `256 MiB`.
    static func sizeLabel(_ bytes: Int64) -> String {
        bytes >= 1 << 30 && bytes % (1 << 30) == 0 ? "\(bytes >> 30) GiB" : "\(bytes >> 20) MiB"
    }

    /// `1000`, `200`.
    static func countLabel(_ count: Int) -> String { "\(count)" }

    /// Bytes in MiB.
    static func mibValue(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

    /// Bytes in MiB, three significant figures.
    static func mib(_ bytes: Int) -> String { Report.compact(mibValue(bytes)) }
}
