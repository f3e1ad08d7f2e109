@testable import BlobStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Crash consistency of eviction: `blob --root ROOT put` child processes put into stores that are over
// their count limit (each round lowers it by rewriting the store's `policy` file), so each child scans
// its store and evicts while it puts; children are killed with SIGKILL at random moments. After each
// round every store must verify clean as the kill left it, and hold only whole versions that were put.
//
// And eviction took nothing it may not take (STORAGE.md, "Cache mode"). A child evicts by count, down
// to the limit less the headroom (one blob per 64 held), so a round loses at most the blobs over that:
// the store keeps at least min(what it held, limit - headroom) of them. And the child's own blob is
// never a candidate: a new blob is placed just behind the CLOCK hand, the last place it reaches, so
// with a limit of at least one the hand stops before it. An acknowledged put must therefore be there
// after the round, kill or no kill. The final open, which finishes every interrupted eviction, must
// leave the count within the limit and no lower than the limit less its headroom.
//
// Rounds: 12 by default; `BLOBSTORE_CRASH_CYCLES=N` runs N (`BLOBSTORE_CRASH_SEED` replays one run).

@Suite(.enabled(if: BuiltTool.blob != nil, "blob binary not found in <package>/.build/debug; run `swift build` first"), .serialized)
struct EvictionCrashTests {
    static var rounds: Int { ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_CYCLES"].flatMap(Int.init) ?? 12 }
    static let storeCount = 4

    @Test func killNineDuringEvictionLeavesAConsistentStore() async throws {
        let blob = try #require(BuiltTool.blob)
        let scratch = TemporaryRoot()
        let root = scratch.path + "/root"
        let files = scratch.path + "/files"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        let stores = (0..<Self.storeCount).map { "v\($0)" }
        let seed = ProcessInfo.processInfo.environment["BLOBSTORE_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("EvictionCrashTests: \(Self.rounds) rounds × \(Self.storeCount) processes, BLOBSTORE_CRASH_SEED=\(seed)")
        var rng = SplitMix64(seed: seed)

        // Fill each store with 24 blobs, unlimited, in this process (then let it go).
        var versions = [[String: UInt64]](repeating: [:], count: Self.storeCount)
        for (index, name) in stores.enumerated() {
            let store = try PersistentDataStore(name: name, root: URL(fileURLWithPath: root), configuration: StoreConfiguration(durability: .relaxed))
            for number in 0..<24 {
                let bytes = CrashContent.make(size: 40 + Int(rng.next() % 4000), writer: index, idIndex: number, sequence: UInt64(number), rng: &rng)
                let metadata = try await store.put(Data(bytes), identifier: "b\(number)", options: PutOptions())
                versions[index]["b\(number)"] = metadata.etag.checksum
            }
            StoreRegistry.forget(store.core, root: store.rootURL.path, name: name)
        }
        for name in stores { #expect(waitForStoreUnlocked(root + "/" + name), "the filling engine kept \(name)/.lock") }

        // What each store held when last checked: a round may lose only blobs over its limit.
        var held = versions.map { Set($0.keys) }
        var figures = (acknowledged: 0, killed: 0, evicted: 0)
        for round in 1...Self.rounds {
            var children: [(store: Int, child: Child, killAt: Date?)] = []
            var limits = [Int](repeating: 0, count: Self.storeCount)
            var acknowledged = [Bool](repeating: false, count: Self.storeCount)
            let start = Date()
            for store in 0..<Self.storeCount {
                // A lower limit each round, so the child has evicting to do.
                let limit = max(1, 24 - round * 2 + Int(rng.next() % 3))
                limits[store] = limit
                try PolicyFile.write(StorePolicy(maximumCount: limit), paths: StorePaths(root: root, name: stores[store]))
                let number = 100 + round
                let bytes = CrashContent.make(size: 40 + Int(rng.next() % 4000), writer: store, idIndex: number, sequence: UInt64(number), rng: &rng)
                let path = files + "/\(store)-\(round)"
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                versions[store]["b\(number)"] = CrashContent.hash(bytes)
                let killAt = rng.next() % 4 == 0 ? nil : start.addingTimeInterval(Double(rng.next() % 150_000) / 1_000_000)
                let child = try Child(blob, ["--root", root, "put", "\(stores[store])/b\(number)", path], errorPath: files + "/stderr-\(store)")
                children.append((store, child, killAt))
            }
            for entry in children.sorted(by: { ($0.killAt ?? .distantFuture) < ($1.killAt ?? .distantFuture) }) {
                guard let killAt = entry.killAt else { continue }
                let wait = killAt.timeIntervalSinceNow
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
                entry.child.kill9()
            }
            for entry in children {
                let (status, killed) = entry.child.wait()
                if killed { figures.killed += 1 } else if status == 0 {
                    figures.acknowledged += 1
                    acknowledged[entry.store] = true
                } else {
                    Issue.record("round \(round) (seed \(seed)): blob put into \(stores[entry.store]) exited \(status): \(entry.child.errorText)")
                }
            }
            // Each store as the kill left it, read without recovery: clean, and only whole versions that were put.
            for (index, name) in stores.enumerated() {
                let reader = try PersistentDataStore(readingOnly: name, root: URL(fileURLWithPath: root))
                let report = try await reader.verify()
                #expect(report.isClean, "round \(round) (seed \(seed)): \(name): \(report)")
                let page = try await reader.list(ListQuery(limit: 1000))
                for item in page.items {
                    let bytes = [UInt8](try await reader.get(item.identifier))
                    let number = Int(item.identifier.dropFirst())!
                    if let problem = CrashContent.problem(in: bytes, idIndex: number) { Issue.record("round \(round): \(name)/\(item.identifier): \(problem)") }
                    #expect(versions[index][item.identifier] == item.etag.checksum, "round \(round): \(name)/\(item.identifier) is no version that was put")
                }
                let now = Set(page.items.map(\.identifier))
                let own = "b\(100 + round)"
                let context = "round \(round) (seed \(seed)): \(name), limit \(limits[index]), held \(held[index].count)"
                if acknowledged[index] { #expect(now.contains(own), "\(context): the child's acknowledged put \(own) is gone") }
                // Eviction stops at the limit less the headroom: the store keeps everything it held
                // (and the child's blob if it was stored) or at least that many.
                let before = held[index].count + (now.contains(own) ? 1 : 0)
                let floor = min(before, limits[index] - (held[index].count + 1) / CacheCatalog.headroomDivisor)
                #expect(now.count >= floor, "\(context): \(now.count) blobs left of \(before), eviction may take them down to \(floor)")
                held[index] = now
            }
        }
        // Opened for writing, each store finishes evicting down to its limit (and no further than its
        // headroom below it) and still verifies clean.
        for (index, name) in stores.enumerated() {
            let store = try PersistentDataStore(name: name, root: URL(fileURLWithPath: root))
            try await store.core.settleCache()
            let policy = try await store.policy()
            let statistics = try await store.statistics()
            let limit = policy.maximumCount!
            #expect(statistics.count <= limit)
            let floor = min(held[index].count, limit - held[index].count / CacheCatalog.headroomDivisor)
            #expect(statistics.count >= floor, "\(name): \(statistics.count) blobs left of \(held[index].count), limit \(limit)")
            figures.evicted += Int(try await store.cacheCounters().evicted)
            let report = try await store.verify()
            #expect(report.isClean && report.healthy == statistics.count, "\(name): \(report)")
        }
        print("EvictionCrashTests: \(figures.acknowledged) puts acknowledged, \(figures.killed) killed, \(figures.evicted) evicted at the final open (the rest by the children)")
    }
}
