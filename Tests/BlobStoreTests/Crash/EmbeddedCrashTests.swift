import BlobStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Crash consistency of the embedded store: many `blob --root ROOT put|rm` child processes run at once
// on one root (one per store, since a store is locked by one process at a time), are killed with SIGKILL
// at random moments, and the root is then opened with `PersistentDataStore` and checked.
//
// Rounds: 25 by default; `BLOBSTORE_CRASH_CYCLES=N` runs N (`BLOBSTORE_CRASH_SEED` replays one run).

@Suite(.enabled(if: BuiltTool.blob != nil, "blob binary not found in <package>/.build/debug; run `swift build` first"), .serialized)
struct EmbeddedCrashTests {
    static var rounds: Int { ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_CYCLES"].flatMap(Int.init) ?? 25 }
    static let storeCount = 8
    static let identifiers = ["doc/0", "doc/1", "doc 2", ".hidden/3"]

    enum Op {
        case put(etag: UInt64, size: Int)
        case remove
    }

    @Test func killNineDuringPutsLeavesOnlyCompleteVersions() async throws {
        let blob = try #require(BuiltTool.blob)
        let scratch = TemporaryRoot()
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let root = scratch.path + "/root"
        let files = scratch.path + "/files"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        let stores = (0..<Self.storeCount).map { "e\($0)" }
        let seed = ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("EmbeddedCrashTests: \(Self.rounds) rounds × \(Self.storeCount) concurrent processes, BLOBSTORE_CRASH_SEED=\(seed)")
        var rng = SplitMix64(seed: seed)

        // Current state per store and identifier: an ETag, or nil for absent.
        var state = [[UInt64?]](repeating: [UInt64?](repeating: nil, count: Self.identifiers.count), count: Self.storeCount)
        var figures = (acked: 0, killed: 0, killedLanded: 0, leftoverTemps: 0, blobs: 0)
        let started = Date()
        var sequence: UInt64 = 0

        for round in 1...Self.rounds {
            // One child per store, all at once.
            var children: [(store: Int, id: Int, op: Op, child: Child, killAt: Date?)] = []
            let roundStart = Date()
            for store in 0..<Self.storeCount {
                sequence += 1
                let id = Int(rng.next() % UInt64(Self.identifiers.count))
                let address = stores[store] + "/" + Self.identifiers[id]
                let op: Op
                let arguments: [String]
                if rng.next() % 10 == 0 {
                    op = .remove
                    arguments = ["--root", root, "rm", "-f", address]
                } else {
                    // 1 B … 8 MiB, log-uniform, so kills land before, during and after the write and the sync.
                    let size = max(1, Int(pow(2, Double(rng.next() % 23_000) / 1000)))
                    let bytes = CrashContent.make(size: size, writer: store, idIndex: id, sequence: sequence, rng: &rng)
                    let path = files + "/\(store)-\(sequence)"
                    try Data(bytes).write(to: URL(fileURLWithPath: path))
                    op = .put(etag: CrashContent.hash(bytes), size: size)
                    arguments = ["--root", root, "put", address, path]
                }
                // Three in four are killed 0–120 ms after the start; the rest run to the end.
                let killAt = rng.next() % 4 == 0 ? nil : roundStart.addingTimeInterval(Double(rng.next() % 120_000) / 1_000_000)
                let child = try Child(blob, arguments, errorPath: files + "/stderr-\(store)")
                children.append((store, id, op, child, killAt))
            }
            for entry in children.sorted(by: { ($0.killAt ?? .distantFuture) < ($1.killAt ?? .distantFuture) }) {
                guard let killAt = entry.killAt else { continue }
                let wait = killAt.timeIntervalSinceNow
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
                entry.child.kill9()
            }
            var unknown: [Int: (id: Int, op: Op)] = [:]
            var acknowledged: [Int: (id: Int, op: Op)] = [:]
            for entry in children {
                let (status, killed) = entry.child.wait()
                if killed {
                    figures.killed += 1
                    unknown[entry.store] = (entry.id, entry.op)
                } else if status == 0 {
                    figures.acked += 1
                    acknowledged[entry.store] = (entry.id, entry.op)
                } else {
                    Issue.record("round \(round) (seed \(seed)): blob for store \(stores[entry.store]) exited \(status): \(entry.child.errorText)")
                    unknown[entry.store] = (entry.id, entry.op)  // did not report success; judge it as unknown
                }
            }
            for file in folderEntries(files) where !file.hasPrefix("stderr") { try? FileManager.default.removeItem(atPath: files + "/" + file) }

            if let marker = try? String(contentsOfFile: root + "/.blobstore-format", encoding: .utf8) {
                #expect(marker == "blobstore 1\n", "round \(round): format marker is '\(marker)'")
            }
            // Open every store in this process and check it.
            for store in 0..<Self.storeCount {
                let storePath = root + "/" + stores[store]
                guard FileManager.default.fileExists(atPath: storePath + "/.lock") else { continue }
                figures.leftoverTemps += folderEntries(storePath + "/tmp").count
                let problems = try await Self.check(
                    store: stores[store], root: root, storeIndex: store, state: &state[store],
                    acknowledged: acknowledged[store], unknown: unknown[store],
                    round: round, landed: &figures.killedLanded)
                for problem in problems { Issue.record("round \(round) (seed \(seed)): store \(stores[store]): \(problem)") }
                #expect(waitForStoreUnlocked(storePath), "the test's own store engine did not release \(storePath)/.lock")
                if !problems.isEmpty { return }
            }
        }
        figures.blobs = state.joined().compactMap { $0 }.count
        print(
            "EmbeddedCrashTests: \(Self.rounds) rounds in \(String(format: "%.1f", Date().timeIntervalSince(started))) s: "
                + "\(figures.acked) acknowledged (exit 0), \(figures.killed) killed (\(figures.killedLanded) of those found stored), "
                + "\(figures.leftoverTemps) temp files left by killed processes and removed on open, \(figures.blobs) blobs at the end")
    }

    /// Several processes opening a brand-new root at once (each its own store) all succeed, and the
    /// root's format marker is complete. (Before the marker got a temp file per process, about 40 % of
    /// such puts failed with `rename … ENOENT` or `layout ''`, and a kill could leave an empty marker.)
    @Test func concurrentFirstOpenOfAFreshRoot() throws {
        let blob = try #require(BuiltTool.blob)
        let scratch = TemporaryRoot()
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let file = scratch.path + "/content"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        var failures = 0
        for round in 0..<15 {
            let root = scratch.path + "/root\(round)"
            // posix_spawn back to back: the eight first opens overlap far more than with Process.
            let pids = try (0..<8).map { store in
                try spawnProcess(blob.path, ["--root", root, "put", "s\(store)/x", file], errorPath: root + ".err")
            }
            for pid in pids {
                let status = waitForProcess(pid)
                if status != 0 { failures += 1 }
            }
            let errors = (try? String(contentsOfFile: root + ".err", encoding: .utf8)) ?? ""
            if !errors.isEmpty { Issue.record("round \(round): \(errors)") }
            let marker = try String(contentsOfFile: root + "/.blobstore-format", encoding: .utf8)
            #expect(marker == "blobstore 1\n", "format marker: '\(marker)'")
        }
        #expect(failures == 0)
        print("EmbeddedCrashTests: 15 fresh roots × 8 concurrent first opens: \(failures) failed puts")
    }

    /// Opens the store, checks it against the expected states, and updates `state` to what it holds.
    static func check(
        store name: String, root: String, storeIndex: Int, state: inout [UInt64?], acknowledged: (id: Int, op: Op)?, unknown: (id: Int, op: Op)?,
        round: Int, landed: inout Int
    ) async throws -> [String] {
        var problems: [String] = []
        let store = try PersistentDataStore(name: name, root: URL(fileURLWithPath: root))
        let leftovers = folderEntries(root + "/" + name + "/tmp")
        if !leftovers.isEmpty { problems.append("temp files still present after open: \(leftovers)") }
        let report = try await store.verify()
        if !report.isClean { problems.append("verify: \(report)") }
        var present = Set<String>()
        for (index, identifier) in identifiers.enumerated() {
            let observed: UInt64?
            do {
                let data = try await store.get(identifier)
                let bytes = [UInt8](data)
                if let problem = CrashContent.problem(in: bytes, idIndex: index) { problems.append("'\(identifier)': \(problem)") }
                observed = CrashContent.hash(bytes)
                present.insert(identifier)
            } catch BlobStoreError.notFound {
                observed = nil
            }
            // What may be there: the previous state, or what this round's process did to this identifier.
            func result(of op: Op) -> UInt64? {
                if case .put(let etag, _) = op { return etag }
                return nil
            }
            var allowed: [UInt64?] = [state[index]]
            if let acknowledged, acknowledged.id == index { allowed = [result(of: acknowledged.op)] }
            if let unknown, unknown.id == index { allowed.append(result(of: unknown.op)) }
            if !allowed.contains(where: { $0 == observed }) {
                problems.append(
                    "'\(identifier)': found \(observed.map { String(format: "%016llx", $0) } ?? "absent"), expected one of "
                        + allowed.map { $0.map { String(format: "%016llx", $0) } ?? "absent" }.joined(separator: ", "))
            } else if let unknown, unknown.id == index, observed != state[index] {
                landed += 1
            }
            state[index] = observed
        }
        let page = try await store.list(ListQuery(limit: 1000))
        let listed = Set(page.items.map(\.identifier))
        if listed != present { problems.append("listing \(listed.sorted()) differs from what get found \(present.sorted())") }
        return problems
    }
}
