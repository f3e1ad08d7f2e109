// fastpath-driver: runs each workload with and without one of the file store's fast paths, on
// several file systems, alternating round by round, and prints one JSON line per run.
//
// Not part of the product: `Benchmarks/scripts/fastpaths/run` copies this file into a scratch copy
// of the package patched with `fastpaths.patch` (which adds `FastPathSwitches` and this target),
// builds it in release mode and turns the lines into a table (`report.py`).
//
// usage: fastpath-driver --fs LABEL=DIR [--fs LABEL=DIR ...] [--rounds N] [--only CASE,...] [--list]
//                        [--keep LABEL]   (do not delete that file system's run folders between runs)

import BlobStore
import BlobSystem
import Foundation
import Glibc

// MARK: - Variants

/// One way to run a workload: which switches are on, and whether cached reads skip the queue.
struct Variant: Sendable {
    var name: String
    var anonymousTemps = true
    var claimNameFirst = true
    var trashLink = true
    var removeIntoTrash = true
    var rightmostSplit = true
    var hashedCut = true
    var inlineCachedReads = true

    func apply() {
        FastPathSwitches.set(
            anonymousTemps: anonymousTemps, claimNameFirst: claimNameFirst, trashLink: trashLink,
            removeIntoTrash: removeIntoTrash, rightmostSplit: rightmostSplit, hashedCut: hashedCut)
    }

    static let all = Variant(name: "all")
    /// The same as ``all``: its ratio to ``all`` shows how far two identical runs differ here (a control).
    static let allAgain = Variant(name: "all-again")
    static let noAnonymous = Variant(name: "no-anonymous-temps", anonymousTemps: false)
    static let noClaim = Variant(name: "no-claim-name-first", claimNameFirst: false)
    static let noTrashLink = Variant(name: "no-trash-link", trashLink: false)
    static let noRemoveTrash = Variant(name: "no-remove-into-trash", removeIntoTrash: false)
    static let noRightmost = Variant(name: "no-rightmost-split", rightmostSplit: false)
    static let noHashedCut = Variant(name: "no-hashed-cut", hashedCut: false)
    static let queuedReads = Variant(name: "no-inline-cached-reads", inlineCachedReads: false)
}

// MARK: - Workloads

enum Identifiers: Sendable {
    case random, ascending
}

enum Workload: Sendable {
    /// `count` puts of new blobs of `size` bytes by `writers` tasks.
    case put(size: Int, count: Int, writers: Int, durability: Durability, ids: Identifiers = .random, capacity: Int = 8192, window: Int = 0)
    /// `count` blobs put (untimed), then each put again (timed).
    case overwrite(size: Int, count: Int, writers: Int, durability: Durability)
    /// `count` blobs put (untimed), then each removed (timed).
    case remove(size: Int, count: Int, writers: Int, durability: Durability)
    /// `blobs` blobs put and read once (untimed), then `gets` gets of them by `readers` tasks.
    case get(size: Int, blobs: Int, gets: Int, readers: Int)
}

struct Case: Sendable {
    var name: String
    var workload: Workload
    /// The first is the reference ("with"); each other one turns one fast path off.
    var variants: [Variant]
    var rounds: Int? = nil
}

let KiB = 1024, MiB = 1024 * 1024

let cases: [Case] = [
    Case(name: "put-relaxed-4k-x1", workload: .put(size: 4 * KiB, count: 3000, writers: 1, durability: .relaxed),
         variants: [.all, .allAgain, .noAnonymous, .noClaim]),
    Case(name: "put-relaxed-4k-x16", workload: .put(size: 4 * KiB, count: 6000, writers: 16, durability: .relaxed),
         variants: [.all, .noAnonymous, .noClaim]),
    Case(name: "put-relaxed-1m-x1", workload: .put(size: MiB, count: 64, writers: 1, durability: .relaxed),
         variants: [.all, .noAnonymous, .noClaim]),
    Case(name: "put-relaxed-1m-x16", workload: .put(size: MiB, count: 128, writers: 16, durability: .relaxed),
         variants: [.all, .noAnonymous, .noClaim]),
    Case(name: "overwrite-relaxed-4k-x1", workload: .overwrite(size: 4 * KiB, count: 300, writers: 1, durability: .relaxed),
         variants: [.all, .noAnonymous, .noClaim, .noTrashLink]),
    Case(name: "overwrite-relaxed-1m-x1", workload: .overwrite(size: MiB, count: 40, writers: 1, durability: .relaxed),
         variants: [.all, .noTrashLink]),
    Case(name: "overwrite-durable-4k-x16", workload: .overwrite(size: 4 * KiB, count: 600, writers: 16, durability: .durable),
         variants: [.all, .noTrashLink]),
    Case(name: "remove-relaxed-4k-x1", workload: .remove(size: 4 * KiB, count: 1000, writers: 1, durability: .relaxed),
         variants: [.all, .noRemoveTrash]),
    Case(name: "remove-durable-4k-x16", workload: .remove(size: 4 * KiB, count: 600, writers: 16, durability: .durable),
         variants: [.all, .noRemoveTrash]),
    Case(name: "put-ascending-1k-x1", workload: .put(size: KiB, count: 40000, writers: 1, durability: .relaxed, ids: .ascending, window: 2000),
         variants: [.all, .noRightmost], rounds: 5),
    Case(name: "put-random-1k-x1-cap1024", workload: .put(size: KiB, count: 40000, writers: 1, durability: .relaxed, capacity: 1024, window: 2000),
         variants: [.all, .noHashedCut], rounds: 5),
    Case(name: "get-4k-hot-x1", workload: .get(size: 4 * KiB, blobs: 1000, gets: 40000, readers: 1),
         variants: [.all, .queuedReads]),
    Case(name: "get-4k-hot-x16", workload: .get(size: 4 * KiB, blobs: 1000, gets: 80000, readers: 16),
         variants: [.all, .queuedReads]),
]

// MARK: - Running

struct Measurement: Codable {
    var `case`: String
    var fs: String
    var variant: String
    var round: Int
    var ops: Int
    /// Until the last operation was acknowledged.
    var seconds: Double
    /// Until the store's `trash/` was empty as well (replaced or removed versions freed).
    var settledSeconds: Double
    /// The slowest window of `window` consecutive operations, in operations per second (put cases with a window).
    var worstWindowOpsPerSecond: Double?
    /// Bucket folders at the end (split cases).
    var buckets: Int?
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func randomBytes(_ count: Int) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        var generator = SystemRandomNumberGenerator()
        let words = raw.bindMemory(to: UInt8.self)
        for index in words.indices { words[index] = UInt8.random(in: 0...255, using: &generator) }
    }
    return data
}

func identifiers(_ count: Int, _ kind: Identifiers, salt: String) -> [String] {
    switch kind {
    case .ascending: return (0..<count).map { String(format: "%@-%08d", salt, $0) }
    case .random: return (0..<count).map { _ in UUID().uuidString.lowercased() }
    }
}

/// Runs `body(index)` for indices `0..<count` split over `tasks` tasks (index i goes to task i % tasks).
func spread(_ count: Int, tasks: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
            group.addTask {
                for index in stride(from: task, to: count, by: tasks) { try await body(index) }
            }
        }
        try await group.waitForAll()
    }
}

func waitUntilEmpty(_ folder: String) async {
    let deadline = now() + 300
    while now() < deadline {
        guard let entries = try? DirectoryStream.entries(of: folder), !entries.isEmpty else { return }
        try? await Task.sleep(for: .milliseconds(2))
    }
}

func bucketCount(_ storeFolder: String) -> Int {
    ((try? DirectoryStream.entries(of: storeFolder + "/b")) ?? []).count
}

final class Clock: @unchecked Sendable {
    // Written by the single writer of a windowed case only.
    var marks: [Double] = []
}

func run(_ testCase: Case, variant: Variant, fs: String, root: String, round: Int) async throws -> Measurement {
    variant.apply()
    let folder = root + "/r\(round)-\(testCase.name)-\(variant.name)-\(UInt32.random(in: 0...UInt32.max))"
    try FileSystem.makeDirectory(folder)
    let storeFolder = folder + "/s"
    func open(_ durability: Durability, capacity: Int = 8192) throws -> PersistentDataStore {
        try PersistentDataStore(
            name: "s", root: URL(fileURLWithPath: folder),
            configuration: StoreConfiguration(durability: durability, bucketCapacity: capacity, inlineCachedReads: variant.inlineCachedReads))
    }
    let options = PutOptions()
    var result = Measurement(case: testCase.name, fs: fs, variant: variant.name, round: round, ops: 0, seconds: 0, settledSeconds: 0)
    switch testCase.workload {
    case .put(let size, let count, let writers, let durability, let kind, let capacity, let window):
        let store = try open(durability, capacity: capacity)
        let data = randomBytes(size)
        let ids = identifiers(count, kind, salt: "id")
        sync()
        let clock = Clock()
        let start = now()
        if window > 0 {
            precondition(writers == 1)
            clock.marks.append(start)
            for index in 0..<count {
                try await store.put(data, identifier: ids[index], options: options)
                if (index + 1) % window == 0 { clock.marks.append(now()) }
            }
        } else {
            try await spread(count, tasks: writers) { index in _ = try await store.put(data, identifier: ids[index], options: options) }
        }
        let end = now()
        await waitUntilEmpty(storeFolder + "/trash")
        result.ops = count
        result.seconds = end - start
        result.settledSeconds = now() - start
        if window > 0 {
            let slowest = zip(clock.marks, clock.marks.dropFirst()).map { $1 - $0 }.max() ?? 0
            result.worstWindowOpsPerSecond = slowest > 0 ? Double(window) / slowest : nil
            result.buckets = bucketCount(storeFolder)
        }
    case .overwrite(let size, let count, let writers, let durability):
        let store = try open(durability)
        let ids = identifiers(count, .random, salt: "id")
        let first = randomBytes(size), second = randomBytes(size)
        try await spread(count, tasks: 2) { index in _ = try await store.put(first, identifier: ids[index], options: options) }
        sync()  // the old versions occupy real blocks before they are replaced
        let start = now()
        try await spread(count, tasks: writers) { index in _ = try await store.put(second, identifier: ids[index], options: options) }
        let end = now()
        await waitUntilEmpty(storeFolder + "/trash")
        result.ops = count
        result.seconds = end - start
        result.settledSeconds = now() - start
    case .remove(let size, let count, let writers, let durability):
        let store = try open(durability)
        let ids = identifiers(count, .random, salt: "id")
        let data = randomBytes(size)
        try await spread(count, tasks: 2) { index in _ = try await store.put(data, identifier: ids[index], options: options) }
        sync()
        let start = now()
        try await spread(count, tasks: writers) { index in
            let existed = try await store.remove(ids[index], condition: .none)
            precondition(existed)
        }
        let end = now()
        await waitUntilEmpty(storeFolder + "/trash")
        result.ops = count
        result.seconds = end - start
        result.settledSeconds = now() - start
    case .get(let size, let blobs, let gets, let readers):
        let store = try open(.relaxed)
        let ids = identifiers(blobs, .random, salt: "id")
        let data = randomBytes(size)
        try await spread(blobs, tasks: 2) { index in _ = try await store.put(data, identifier: ids[index], options: options) }
        sync()
        for id in ids { _ = try await store.get(id) }  // warm: every file and its path in the caches
        var generator = SystemRandomNumberGenerator()
        let order = (0..<gets).map { _ in Int.random(in: 0..<blobs, using: &generator) }
        let start = now()
        try await spread(gets, tasks: readers) { index in
            let bytes = try await store.get(ids[order[index]])
            precondition(bytes.count == size)
        }
        let end = now()
        result.ops = gets
        result.seconds = end - start
        result.settledSeconds = end - start
    }
    return result
}

// MARK: - Main

var fileSystems: [(label: String, path: String)] = []
var rounds = 5
var only: Set<String> = []
var keep: Set<String> = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--fs":
        guard let value = arguments.popFirst(), let equals = value.firstIndex(of: "=") else { fatalError("--fs LABEL=DIR") }
        fileSystems.append((String(value[..<equals]), String(value[value.index(after: equals)...])))
    case "--rounds": rounds = Int(arguments.popFirst() ?? "") ?? rounds
    case "--only": only = Set((arguments.popFirst() ?? "").split(separator: ",").map(String.init))
    case "--keep": keep.insert(arguments.popFirst() ?? "")
    case "--list":
        for c in cases { print(c.name, c.variants.map(\.name).joined(separator: " ")) }
        exit(0)
    default: fatalError("unknown argument \(argument)")
    }
}
precondition(!fileSystems.isEmpty, "give at least one --fs LABEL=DIR")
let unknown = only.subtracting(cases.map(\.name))
precondition(unknown.isEmpty, "unknown cases: \(unknown.sorted())")

let encoder = JSONEncoder()
encoder.outputFormatting = .sortedKeys
for testCase in cases where only.isEmpty || only.contains(testCase.name) {
    let caseRounds = testCase.rounds.map { min($0, rounds) } ?? rounds
    for round in 0..<caseRounds {
        // Alternate which file system goes first and rotate the variants' order from round to round.
        let fsOrder = round % 2 == 0 ? fileSystems : fileSystems.reversed()
        let shift = round % testCase.variants.count
        let variants = Array(testCase.variants[shift...] + testCase.variants[..<shift])
        for (label, root) in fsOrder {
            for variant in variants {
                let measurement = try await run(testCase, variant: variant, fs: label, root: root, round: round)
                print(String(decoding: try encoder.encode(measurement), as: UTF8.self))
                fflush(nil)  // each line out at once (stdout is a pipe)
                let rate = Double(measurement.ops) / measurement.seconds
                FileHandle.standardError.write(Data(String(
                    format: "%@ round %d %@ %@: %.0f ops/s (settled %.0f)\n", testCase.name, round, label, variant.name, rate,
                    Double(measurement.ops) / measurement.settledSeconds).utf8))
                if !keep.contains(label) {
                    // Untimed. The next run's folder is new, so this costs it nothing but the deletion itself.
                    for entry in (try? DirectoryStream.entries(of: root)) ?? [] where entry.name.hasPrefix("r\(round)-\(testCase.name)-\(variant.name)-") {
                        try? FileSystem.removeTree(root + "/" + entry.name)
                    }
                }
            }
        }
    }
}
FastPathSwitches.set()
