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

/// Content that proves it is complete: a header naming who wrote it, and a trailing XXH64 of the rest.
///
/// Layout (little-endian) for sizes ≥ 40: `BSCR`, writer (UInt16), identifier index (UInt16),
/// sequence (UInt64), total length (UInt64), random bytes, XXH64 of everything before the last 8 bytes.
/// Smaller blobs are random bytes only; they are recognised by their XXH64 among the versions sent.
enum CrashContent {
    static let headerSize = 24
    static let minimumSelfChecking = 40

    static func make(size: Int, writer: Int, idIndex: Int, sequence: UInt64, rng: inout FastRandom) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                raw.storeBytes(of: rng.next().littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < raw.count {
                raw[offset] = UInt8(truncatingIfNeeded: rng.next())
                offset += 1
            }
        }
        guard size >= minimumSelfChecking else { return bytes }
        bytes.withUnsafeMutableBytes { raw in
            for (offset, byte) in "BSCR".utf8.enumerated() { raw[offset] = byte }
            raw.storeBytes(of: UInt16(writer).littleEndian, toByteOffset: 4, as: UInt16.self)
            raw.storeBytes(of: UInt16(idIndex).littleEndian, toByteOffset: 6, as: UInt16.self)
            raw.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: UInt64(size).littleEndian, toByteOffset: 16, as: UInt64.self)
            let sum = XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[..<(size - 8)]))
            raw.storeBytes(of: sum.littleEndian, toByteOffset: size - 8, as: UInt64.self)
        }
        return bytes
    }

    static func hash(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { XXH64.hash($0) } }

    /// Why `bytes` is not a complete version, or nil when it checks out (small blobs always do).
    static func problem(in bytes: [UInt8], idIndex: Int) -> String? {
        guard bytes.count >= minimumSelfChecking else { return nil }
        return bytes.withUnsafeBytes { raw -> String? in
            guard Array(raw[0..<4]) == Array("BSCR".utf8) else { return "no BSCR magic (foreign or torn content)" }
            let length = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            guard length == UInt64(bytes.count) else { return "embedded length \(length) but \(bytes.count) bytes (torn)" }
            let index = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
            guard index == idIndex else { return "content written for identifier #\(index), found under #\(idIndex)" }
            let stored = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
            let sum = XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[..<(bytes.count - 8)]))
            return stored == sum ? nil : "embedded checksum mismatch (torn content)"
        }
    }

    /// A size in 1 B ... 256 KiB: 10 % tiny (1–39 B), the rest log-uniform from 40 B.
    static func randomSize(_ rng: inout FastRandom) -> Int {
        if rng.next() % 10 == 0 { return Int(rng.next() % 39) + 1 }
        let exponent = Double(rng.next() % 1_000_000) / 1_000_000 * log2(262_144.0 / 40.0)
        return min(262_144, Int(40 * pow(2, exponent)))
    }
}

/// SplitMix64: fast, seedable, good enough to fill test blobs.
struct FastRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Monotonic nanoseconds.
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A `blobd --durability durable` process that can be SIGKILLed and restarted on the same root and socket.
final class CrashDaemon {
    let root: String
    let socketPath: String
    let logPath: String
    private(set) var process: Process?
    /// A program and arguments to run blobd through (blobd's path and arguments follow), e.g. a shell that sets limits.
    var wrapper: [String] = []
    /// `--durability` (durable unless a test needs relaxed puts).
    var durability = "durable"

    init(root: String, socketPath: String, logPath: String) {
        self.root = root
        self.socketPath = socketPath
        self.logPath = logPath
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    }

    func start() throws {
        let process = Process()
        let arguments = ["--root", root, "--socket", socketPath, "--durability", durability, "--log-level", "error"]
        if let program = wrapper.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(wrapper.dropFirst()) + [BlobdBinary.url!.path] + arguments
        } else {
            process.executableURL = BlobdBinary.url!
            process.arguments = arguments
        }
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if !process.isRunning { throw HarnessError("blobd exited early (\(process.terminationStatus)): \(logText)") }
            if let fd = try? UnixSocket.connect(path: socketPath) {
                try? fd.close()
                return
            }
            usleep(10_000)
        }
        throw HarnessError("blobd did not start listening within 30 s: \(logText)")
    }

    var logText: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL and reap.
    func kill9() {
        guard let process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGTERM (SIGKILL after 10 s) and reap; returns the exit status.
    @discardableResult
    func stop() -> Int32? {
        guard let process else { return nil }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
        return process.terminationStatus
    }

    deinit { kill9() }
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
    var rng: FastRandom
    var sequence: UInt64 = 0
    var ops: [CrashOp] = []
    var unexpected: [String] = []
    let done = DispatchSemaphore(value: 0)

    init(index: Int, seed: UInt64) {
        self.index = index
        rng = FastRandom(seed: seed)
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
        var master = FastRandom(seed: seed)

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
