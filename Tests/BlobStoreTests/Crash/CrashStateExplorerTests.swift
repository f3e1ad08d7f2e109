import BlobSystem
import Foundation
import Testing

@testable import BlobStore

/// Power cuts on a file system that keeps only what was synced (``WeakPersistenceModel``): a workload's
/// file-system calls are recorded through ``FileSystemSeam``, and at every acknowledgement and every
/// sync the crash states the model allows are written out, opened as a store, and checked against
/// the promises of docs/STORAGE.md ("Durability modes").
///
/// `BLOBSTORE_CRASH_STATES=N` sets how many states are explored per crash point (default 6; all of
/// them when a point has no more); `BLOBSTORE_CRASH_SEED` the seed of the random picks.
@Suite(.serialized)
struct CrashStateExplorerTests {
    /// One operation of the workload.
    struct Operation: Sendable {
        var index: Int
        /// `*` for a remove-all.
        var identifier: String
        /// `nil` for a remove.
        var content: [UInt8]?
        var durable: Bool
        /// Whether the blob existed when the operation ran (the previous operation on it was a put).
        var replaces: Bool
    }

    /// What a reader finds under an identifier.
    enum Outcome: Hashable, CustomStringConvertible {
        case absent
        case content(UInt64, Int)
        /// A file the store reports as corrupt (never served).
        case damaged

        init(_ bytes: [UInt8]) { self = .content(CrashContent.hash(bytes), bytes.count) }

        var description: String {
            switch self {
            case .absent: return "absent"
            case .content(let hash, let count): return "\(count) B #\(String(hash, radix: 16).prefix(6))"
            case .damaged: return "damaged (reported corrupt)"
            }
        }
    }

    static let bucketCapacity = 4
    static let storeName = "s"

    /// Batches of operations run concurrently (distinct identifiers within a batch), one batch after another.
    static func workload(seed: UInt64) -> [[Operation]] {
        var random = SplitMix64(seed: seed)
        var lastWasPut: [String: Bool] = [:]
        var index = 0
        func op(_ identifier: String, _ size: Int?, durable: Bool) -> Operation {
            defer { index += 1 }
            let content = size.map { CrashContent.make(size: $0, writer: 0, idIndex: 0, sequence: UInt64(index), rng: &random) }
            let operation = Operation(index: index, identifier: identifier, content: content, durable: durable, replaces: lastWasPut[identifier] ?? false)
            lastWasPut[identifier] = content != nil
            return operation
        }
        func size() -> Int { 40 + Int(random.next() % 6000) }
        func removeAll() -> Operation {
            defer { index += 1 }
            for key in lastWasPut.keys { lastWasPut[key] = false }
            return Operation(index: index, identifier: "*", content: nil, durable: true, replaces: true)
        }
        let a = (0..<17).map { "a\($0)" }
        return [
            (0..<6).map { op(a[$0], size(), durable: true) },
            (6..<12).map { op(a[$0], $0 == 9 ? 300_000 : size(), durable: true) },
            [op(a[0], size(), durable: true), op(a[3], size(), durable: true), op(a[7], size(), durable: true),
             op(a[1], nil, durable: true), op(a[8], nil, durable: true), op(a[12], size(), durable: true), op(a[13], size(), durable: true)],
            [op("r0", size(), durable: false), op("r1", size(), durable: false), op("r2", size(), durable: false),
             op(a[4], size(), durable: false), op(a[9], size(), durable: false), op(a[10], nil, durable: false)],
            [op("r0", size(), durable: true), op(a[4], size(), durable: true), op(a[14], size(), durable: true),
             op(a[15], size(), durable: true), op(a[2], size(), durable: true)],
            [op(a[16], size(), durable: true)],
            [op(a[5], nil, durable: true)],
            [op("r1", size(), durable: false)],
            [removeAll()],
            [op(a[3], size(), durable: true), op("r2", size(), durable: false)],
        ]
    }

    /// What each identifier may hold after a crash, given which operations had started and which had been acknowledged.
    static func allowed(_ operations: [Operation], submitted: Set<Int>, acknowledged: Set<Int>) -> [String: Set<Outcome>] {
        var allowed: [String: Set<Outcome>] = [:]
        let identifiers = Set(operations.map(\.identifier)).subtracting(["*"])
        for whole in operations {
            for identifier in whole.identifier == "*" ? identifiers.sorted() : [whole.identifier] {
                var operation = whole
                operation.identifier = identifier
                allow(operation, in: &allowed, submitted: submitted, acknowledged: acknowledged)
            }
        }
        return allowed
    }

    private static func allow(_ operation: Operation, in allowed: inout [String: Set<Outcome>], submitted: Set<Int>, acknowledged: Set<Int>) {
        do {
            var states = allowed[operation.identifier] ?? [.absent]
            guard submitted.contains(operation.index) else {
                allowed[operation.identifier] = states
                return
            }
            let outcome = operation.content.map(Outcome.init) ?? .absent
            if operation.durable && acknowledged.contains(operation.index) {
                states = [outcome]  // the durable promise
            } else {
                states.insert(outcome)
                // A relaxed put of a new name may persist its name before its data: a damaged file,
                // reported and never served. A replacement syncs its content first; a durable put always does.
                if operation.content != nil && !operation.durable && !operation.replaces { states.insert(.damaged) }
            }
            allowed[operation.identifier] = states
        }
    }

    /// Records the workload, then checks every explored crash state; returns the violations and how many states were explored.
    static func explore(statesPerPoint: Int, seed: UInt64) async throws -> (violations: [String], explored: Int, points: Int, exhaustive: Int, damaged: Int, lost: Int) {
        let scratch = TemporaryRoot()
        let workloadRoot = scratch.path + "/workload"
        try FileManager.default.createDirectory(atPath: workloadRoot, withIntermediateDirectories: true)
        let recorder = MutationRecorder(root: workloadRoot)
        let batches = workload(seed: seed)
        FileSystemSeam.install(recorder)
        do {
            let rootURL = URL(fileURLWithPath: workloadRoot)
            let durable = try PersistentDataStore(
                name: storeName, root: rootURL, configuration: StoreConfiguration(durability: .durable, bucketCapacity: bucketCapacity))
            let relaxed = try PersistentDataStore(
                name: storeName, root: rootURL, configuration: StoreConfiguration(durability: .relaxed, bucketCapacity: bucketCapacity))
            for batch in batches {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for operation in batch {
                        group.addTask {
                            let store = operation.durable ? durable : relaxed
                            recorder.mark(.submitted(operation.index))
                            if let content = operation.content {
                                try await store.put(Data(content), identifier: operation.identifier)
                            } else if operation.identifier == "*" {
                                try await store.removeAll()
                            } else {
                                _ = try await store.remove(operation.identifier)
                            }
                            recorder.mark(.acknowledged(operation.index))
                        }
                    }
                    try await group.waitForAll()
                }
            }
        } catch {
            FileSystemSeam.uninstall(recorder)
            throw error
        }
        FileSystemSeam.uninstall(recorder)

        let operations = batches.flatMap { $0 }
        // Crash states are opened on tmpfs where there is one: its syncs cost nothing, and opening a
        // store syncs what it creates. The workload itself ran on the real disk above.
        let stateRoot = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm/blobstore-crash-\(UUID().uuidString)" : scratch.path + "/states"
        try FileManager.default.createDirectory(atPath: stateRoot, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: stateRoot) }
        if let dump = ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_DUMP"] {
            let text = recorder.entries.enumerated().map { "\($0.offset) \(describe($0.element, under: workloadRoot))" }.joined(separator: "\n")
            try text.write(toFile: dump, atomically: true, encoding: .utf8)
        }
        let identifiers = Set(operations.map(\.identifier)).subtracting(["*"]).sorted()
        var model = WeakPersistenceModel(root: workloadRoot)
        var random = SplitMix64(seed: seed ^ 0x5eed)
        var submitted = Set<Int>(), acknowledged = Set<Int>()
        var violations: [String] = []
        var explored = 0, points = 0, exhaustive = 0, damaged = 0, lost = 0
        for (position, entry) in recorder.entries.enumerated() {
            let isCrashPoint: Bool
            switch entry {
            case .submitted(let index):
                submitted.insert(index)
                isCrashPoint = false
            case .acknowledged(let index):
                acknowledged.insert(index)
                isCrashPoint = true
            case .call(let call):
                model.apply(call)
                switch call {
                case .dataSync, .sync, .syncFileSystem: isCrashPoint = true
                default: isCrashPoint = false
                }
            }
            guard isCrashPoint else { continue }
            points += 1
            let expected = allowed(operations, submitted: submitted, acknowledged: acknowledged)
            let (states, total) = model.crashStates(limit: statesPerPoint, random: &random)
            if total != nil { exhaustive += 1 }
            for (number, tree) in states.enumerated() {
                explored += 1
                let folder = stateRoot + "/state-\(position)-\(number)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
                try WeakPersistenceModel.materialise(tree, in: folder)
                let (found, damagedCount, lostCount) = await check(folder: folder, identifiers: identifiers, expected: expected)
                damaged += damagedCount
                lost += lostCount
                violations += found.map { "after entry \(position) (\(describe(entry, under: workloadRoot))), state \(number): \($0)" }
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        violations += model.problems.map { "model: \($0)" }
        return (violations, explored, points, exhaustive, damaged, lost)
    }

    static func describe(_ entry: MutationRecorder.Entry, under root: String) -> String {
        switch entry {
        case .submitted(let index): return "op \(index) submitted"
        case .acknowledged(let index): return "op \(index) acknowledged"
        case .call(let call):
            if case .write(let descriptor, let offset, let bytes) = call { return "write(\(descriptor), at: \(offset.map(String.init) ?? "-"), \(bytes.count) B)" }
            return "\(call)".replacingOccurrences(of: root + "/", with: "")
        }
    }

    /// Opens the store in `folder` and compares what it serves with `expected`.
    static func check(folder: String, identifiers: [String], expected: [String: Set<Outcome>]) async -> (problems: [String], damaged: Int, lost: Int) {
        var problems: [String] = []
        let store: PersistentDataStore
        do {
            store = try PersistentDataStore(
                name: storeName, root: URL(fileURLWithPath: folder), configuration: StoreConfiguration(durability: .durable, bucketCapacity: bucketCapacity))
        } catch {
            return (["the store does not open: \(error)"], 0, expected.values.filter { $0.count == 1 && !$0.contains(.absent) }.count)
        }
        var damagedAllowed: Set<String> = []
        var damaged: [String] = []
        // Identifiers whose only allowed state (an acknowledged durable put or remove) was not found.
        var lost = 0
        for identifier in identifiers {
            let outcome: Outcome
            do {
                outcome = Outcome([UInt8](try await store.get(identifier)))
            } catch BlobStoreError.notFound {
                outcome = .absent
            } catch BlobStoreError.corrupt {
                outcome = .damaged
            } catch {
                problems.append("\(identifier): get failed: \(error)")
                continue
            }
            let allowed = expected[identifier] ?? [.absent]
            if allowed.contains(.damaged) { damagedAllowed.insert(identifier) }
            if outcome == .damaged { damaged.append(identifier) }
            if !allowed.contains(outcome) {
                if allowed.count == 1 { lost += 1 }
                problems.append("\(identifier) is \(outcome); allowed: \(allowed.map(\.description).sorted().joined(separator: " or "))")
            }
        }
        do {
            let report = try await store.verify()
            for finding in report.orphaned { problems.append("verify: orphaned \(finding.path): \(finding.reason)") }
            for finding in report.corrupt {
                let name = String(finding.path.split(separator: "/").last ?? "")
                if !damagedAllowed.contains(name) { problems.append("verify: corrupt \(finding.path): \(finding.reason)") }
            }
        } catch {
            problems.append("verify failed: \(error)")
        }
        if let leftovers = try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + storeName + "/tmp"), !leftovers.isEmpty {
            problems.append("tmp/ not emptied on open: \(leftovers)")
        }
        // A damaged blob is replaced by the next put of its identifier.
        for identifier in damaged {
            do {
                try await store.put(Data("repaired".utf8), identifier: identifier)
                if try await store.get(identifier) != Data("repaired".utf8) { problems.append("\(identifier): a put over the damaged file reads back wrong") }
            } catch {
                problems.append("\(identifier): a put over the damaged file failed: \(error)")
            }
        }
        return (problems, damaged.count, lost)
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_SEED"].flatMap { UInt64($0) } ?? 16
    }

    /// Every acknowledged durable put is there with exactly its content after a power cut at any point;
    /// every other blob holds a version some put sent (whole) or, for a relaxed put of a new name, is
    /// reported damaged; removes stay removed; `verify` finds nothing else; `tmp/` is emptied.
    @Test func everyCrashStateKeepsWhatWasPromised() async throws {
        let perPoint = ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_STATES"].flatMap { Int($0) } ?? 6
        let result = try await Self.explore(statesPerPoint: perPoint, seed: Self.seed)
        print(
            "crash-state explorer: seed \(Self.seed), \(result.points) crash points (\(result.exhaustive) explored exhaustively), "
                + "\(result.explored) crash states, \(result.damaged) relaxed new blobs found damaged (allowed), "
                + "\(result.lost) acknowledged states broken (a durable put lost or damaged, a remove undone), \(result.violations.count) violations")
        #expect(result.explored > 100)
        for violation in result.violations.prefix(20) { Issue.record(Comment(rawValue: violation)) }
    }
}
