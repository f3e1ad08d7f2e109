import BlobStore
import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Crash consistency of the daemon: 16 writer threads PUT and DELETE against `blobd --durability durable`,
// the daemon is killed with SIGKILL at a random moment, restarted on the same root and socket, and
// every identifier's state is checked against what the writers were told (see RELIABILITY.md).
//
// Cycles: 20 by default; `BLOBSTORE_CRASH_CYCLES=N swift test --filter DaemonCrashTests` runs N.
// A cycle's random choices come from `BLOBSTORE_CRASH_SEED` (printed at the start) so a failure can be replayed.

/// Monotonic nanoseconds.
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// One PUT or DELETE as a writer saw it.
struct CrashOp: Sendable {
    enum Kind: Sendable { case put, delete }
    enum Outcome: Sendable, Equatable {
        /// A 2xx response (or 404 for a DELETE) was read in full: the operation took effect before `end`.
        case acknowledged
        /// The connection broke before the response was read: it may or may not have taken effect.
        case unknown
        /// A complete non-2xx response: it did not take effect.
        case failed(Int)
    }
    var writer: Int
    var sequence: UInt64
    var idIndex: Int
    var kind: Kind
    /// XXH64 of the content (puts).
    var etag: UInt64?
    var start: UInt64
    var end: UInt64 = .max
    var outcome: Outcome = .unknown
}

/// What the writers share: the stop flag and the run's parameters.
final class CrashRun: @unchecked Sendable {
    let socketPath: String
    let store: String
    let identifiers: [String]
    let stopped = Locked(false)
    init(socketPath: String, store: String, identifiers: [String]) {
        self.socketPath = socketPath
        self.store = store
        self.identifiers = identifiers
    }
    func path(_ index: Int) -> String { "/v1/stores/\(store)/blobs/\(identifiers[index])" }
}

/// A writer thread's own record (read by the driver only after the thread has finished).
final class CrashWriter: @unchecked Sendable {
    let index: Int
    var rng: SplitMix64
    var sequence: UInt64 = 0
    var ops: [CrashOp] = []
    var unexpected: [String] = []
    let done = DispatchSemaphore(value: 0)

    init(index: Int, seed: UInt64) {
        self.index = index
        rng = SplitMix64(seed: seed)
    }

    func run(_ run: CrashRun) {
        defer { done.signal() }
        var client: RawClient?
        while !run.stopped.withLock({ $0 }) {
            if client == nil {
                client = try? RawClient(path: run.socketPath)
                if client == nil {
                    usleep(2_000)
                    continue
                }
            }
            sequence += 1
            let idIndex = Int(rng.next() % UInt64(run.identifiers.count))
            let isDelete = rng.next() % 100 < 12
            var op: CrashOp
            var body: [UInt8]?
            if isDelete {
                op = CrashOp(writer: index, sequence: sequence, idIndex: idIndex, kind: .delete, etag: nil, start: 0)
            } else {
                let bytes = CrashContent.make(
                    size: CrashContent.randomSize(&rng), writer: index, idIndex: idIndex, sequence: sequence, rng: &rng)
                op = CrashOp(writer: index, sequence: sequence, idIndex: idIndex, kind: .put, etag: CrashContent.hash(bytes), start: 0)
                body = bytes
            }
            op.start = monotonicNanos()  // before the first byte leaves
            do {
                let response = try client!.request(isDelete ? "DELETE" : "PUT", run.path(idIndex), body: body)
                let end = monotonicNanos()  // after the whole response was read
                switch (op.kind, response.status) {
                case (.put, 200), (.put, 201):
                    op.outcome = .acknowledged
                    op.end = end
                    let header = response.header("ETag")
                    let expected = "\"" + String(format: "%016llx", op.etag!) + "\""
                    if header != expected { unexpected.append("PUT \(run.identifiers[idIndex]) answered ETag \(header ?? "none"), sent \(expected)") }
                case (.delete, 204), (.delete, 404):
                    op.outcome = .acknowledged
                    op.end = end
                default:
                    op.outcome = .failed(response.status)
                    op.end = end
                    unexpected.append("\(op.kind) \(run.identifiers[idIndex]) got \(response.status): \(response.text)")
                }
            } catch {
                op.outcome = .unknown
                client = nil
            }
            ops.append(op)
        }
    }
}

@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"), .serialized)
struct DaemonCrashTests {
    static var cycles: Int { ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_CYCLES"].flatMap(Int.init) ?? 20 }
    static let writerCount = 16
    static let identifierCount = 64

    @Test func killNineDuringConcurrentWritesLosesNothingAcknowledged() async throws {
        let folder = TempFolder()
        let root = folder.path + "/root"
        let daemon = CrashDaemon(root: root, socketPath: folder.path + "/run/blobd.sock", logPath: folder.path + "/blobd.log")
        let store = "crash"
        // Identifiers with a '/' and a space, to exercise the file-name coding.
        let identifiers = (0..<Self.identifierCount).map { String(format: "k/%02d%@", $0, $0 % 8 == 0 ? "%20x" : "") }
        let seed = ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("DaemonCrashTests: \(Self.cycles) cycles, \(Self.writerCount) writers, \(Self.identifierCount) identifiers, BLOBSTORE_CRASH_SEED=\(seed)")
        var master = SplitMix64(seed: seed)

        // What each identifier held when the cycle began: an ETag, or nil for absent.
        var initial = [UInt64?](repeating: nil, count: Self.identifierCount)
        var totals = (acked: 0, ackedDeletes: 0, unknown: 0, unknownLanded: 0, present: 0)
        let started = Date()
        try daemon.start()
        for cycle in 1...Self.cycles {
            let run = CrashRun(socketPath: daemon.socketPath, store: store, identifiers: identifiers)
            let writers = (0..<Self.writerCount).map { CrashWriter(index: $0, seed: master.next()) }
            for writer in writers {
                let thread = Thread { writer.run(run) }
                thread.stackSize = 1 << 20
                thread.start()
            }
            let killAfter = 10_000 + Int(master.next() % 290_001)  // 10–300 ms
            usleep(UInt32(killAfter))
            run.stopped.withLock { $0 = true }
            daemon.kill9()
            for writer in writers { writer.done.wait() }

            try daemon.start()
            let ops = writers.flatMap(\.ops)
            for writer in writers {
                for line in writer.unexpected { Issue.record("cycle \(cycle): \(line)") }
            }
            let result = try Self.verify(
                cycle: cycle, ops: ops, initial: initial, run: run, root: root, store: store)
            initial = result.state
            let acked = ops.filter { $0.outcome == .acknowledged }
            totals.acked += acked.count
            totals.ackedDeletes += acked.filter { $0.kind == .delete }.count
            totals.unknown += ops.filter { $0.outcome == .unknown }.count
            totals.unknownLanded += result.unknownLanded
            totals.present = result.state.compactMap { $0 }.count
            if !result.problems.isEmpty {
                for problem in result.problems { Issue.record("cycle \(cycle) (seed \(seed), kill after \(killAfter / 1000) ms): \(problem)") }
                break
            }
        }
        #expect(daemon.stop() == 0)

        // The daemon is gone: the embedded store must find nothing corrupt and no leftovers.
        let persistent = try PersistentDataStore(name: store, root: URL(fileURLWithPath: root))
        let report = try await persistent.verify()
        #expect(report.isClean, "verify after the last cycle: \(report)")
        #expect(report.healthy == totals.present)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: root + "/" + store + "/tmp")) ?? ["<unreadable>"]
        #expect(leftovers.isEmpty, "temp files after reopening: \(leftovers)")
        print(
            "DaemonCrashTests: \(Self.cycles) cycles in \(String(format: "%.1f", Date().timeIntervalSince(started))) s: "
                + "\(totals.acked) acknowledged operations (\(totals.ackedDeletes) deletes), \(totals.unknown) cut by the kill "
                + "(\(totals.unknownLanded) identifiers ended on such an operation), \(report.healthy) blobs verified at the end")
    }

    struct CycleResult {
        var state: [UInt64?]
        var problems: [String]
        var unknownLanded: Int
    }

    /// Checks every identifier against the history (see the linearizability rule in RELIABILITY.md).
    static func verify(cycle: Int, ops: [CrashOp], initial: [UInt64?], run: CrashRun, root: String, store: String) throws -> CycleResult {
        var problems: [String] = []
        var state = [UInt64?](repeating: nil, count: run.identifiers.count)
        var unknownLanded = 0
        let client = try RawClient(path: run.socketPath)
        for index in run.identifiers.indices {
            let name = run.identifiers[index]
            let history = ops.filter { $0.idIndex == index }
            let response = try client.request("GET", run.path(index))
            // The state's possible explanations: an operation that may have taken effect and ended it.
            var candidates: [CrashOp] = history.filter { $0.outcome == .acknowledged || $0.outcome == .unknown }
            // The cycle's starting state, as a virtual operation acknowledged before anything else.
            candidates.append(CrashOp(writer: -1, sequence: 0, idIndex: index, kind: initial[index] == nil ? .delete : .put, etag: initial[index], start: 0, end: 0, outcome: .acknowledged))
            let observed: UInt64?
            switch response.status {
            case 200:
                let sum = CrashContent.hash(response.body)
                if let problem = CrashContent.problem(in: response.body, idIndex: index) {
                    problems.append("'\(name)': \(problem) (\(response.body.count) bytes)")
                }
                let header = response.header("ETag")
                if header != "\"" + String(format: "%016llx", sum) + "\"" {
                    problems.append("'\(name)': ETag header \(header ?? "none") does not match the content's XXH64 \(String(format: "%016llx", sum))")
                }
                candidates = candidates.filter { $0.kind == .put && $0.etag == sum }
                observed = sum
            case 404:
                candidates = candidates.filter { $0.kind == .delete }
                observed = nil
            default:
                problems.append("'\(name)': GET answered \(response.status) \(response.text)")
                continue
            }
            state[index] = observed
            // A candidate is ruled out if an acknowledged operation started after it was acknowledged.
            let acknowledged = history.filter { $0.outcome == .acknowledged }
            let allowed = candidates.filter { candidate in !acknowledged.contains { $0.start > candidate.end } }
            if allowed.isEmpty {
                let lastAck = acknowledged.max { $0.end < $1.end }
                let what = observed.map { "version \(String(format: "%016llx", $0))" } ?? "absent"
                let sentBy = history.first { $0.etag == observed && observed != nil }
                problems.append(
                    "'\(name)': found \(what)\(sentBy.map { " (writer \($0.writer) seq \($0.sequence), \($0.outcome))" } ?? (observed == nil ? "" : " that no writer sent in this cycle")); "
                        + "last acknowledged: \(lastAck.map { "\($0.kind) by writer \($0.writer) seq \($0.sequence)" } ?? "none")")
            } else if !allowed.contains(where: { $0.outcome == .acknowledged }) {
                unknownLanded += 1
            }
        }

        // Listing: only our well-formed identifiers, exactly those present.
        let listing = try client.request("GET", "/v1/stores/\(store)/blobs?limit=1000")
        if listing.status == 200, let items = listing.json?["items"] as? [[String: Any]] {
            let listed = items.compactMap { $0["identifier"] as? String }
            let expected = run.identifiers.indices.filter { state[$0] != nil }.map { run.identifiers[$0].removingPercentEncoding! }
            let wellFormed = Set(run.identifiers.map { $0.removingPercentEncoding! })
            for id in listed where !wellFormed.contains(id) { problems.append("listing shows '\(id)', which no writer wrote (a temp file?)") }
            if Set(listed) != Set(expected) || listed.count != expected.count {
                problems.append("listing shows \(listed.count) identifiers, GET found \(expected.count) present")
            }
        } else if listing.status == 404 && state.allSatisfy({ $0 == nil }) {
            // The store folder may not exist yet if nothing ever landed.
        } else {
            problems.append("listing answered \(listing.status): \(listing.text)")
        }

        // The daemon has the store open again: its temp folder was emptied on open.
        let tmp = root + "/" + store + "/tmp"
        if let leftovers = try? FileManager.default.contentsOfDirectory(atPath: tmp), !leftovers.isEmpty {
            problems.append("temp files after restart: \(leftovers)")
        }
        return CycleResult(state: state, problems: problems, unknownLanded: unknownLanded)
    }
}
