import BlobSystem
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import BlobStore

/// The memory tier (`StoreConfiguration.memoryTierBytes`, STORAGE.md "Memory tier"): hits cost no
/// file system call, every change drops the entry in its barrier, a read racing a change never puts
/// an old version back, and the charged bytes stay within the budget.
@Suite struct MemoryTierTests {
    let root = TemporaryRoot()

    func store(_ name: String = "tier", budget: Int = StoreConfiguration.defaultMemoryTierBytes, inline: Bool = true) throws
        -> PersistentDataStore
    {
        try PersistentDataStore(
            name: name, root: root.url,
            configuration: StoreConfiguration(durability: .relaxed, inlineCachedReads: inline, memoryTierBytes: budget))
    }

    static func content(_ seed: Int, size: Int = 4096) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ seed) })
    }

    // MARK: - Hits cost no file system call

    @Test(arguments: [true, false])
    func hitsOpenNoFileAndSkipTheQueue(inline: Bool) async throws {
        let store = try store(inline: inline)
        let content = MemoryTierTests.content(1)
        let metadata = try await store.put(content, identifier: "hot")
        #expect(try await store.get("hot") == content)  // the miss that fills the tier
        #expect(store.memoryTierStatistics.entries == 1)
        let queuedBefore = store.core.queuedReads.load(ordering: .relaxed)
        let hitsBefore = store.memoryTierStatistics.hits

        let recorder = CallRecorder(under: store.folderURL.path)
        FileSystemSeam.install(recorder)
        defer { FileSystemSeam.uninstall(recorder) }
        for _ in 0..<5 { #expect(try await store.get("hot") == content) }
        #expect(try await store.get("hot", range: 10..<20) == content.subdata(in: 10..<20))
        #expect(try await store.head("hot") == metadata)
        #expect(try await store.exists("hot"))
        #expect(try store.content(of: "hot") == content)
        let served = try #require(store.openIfReady("hot"))
        #expect(served.readsWithoutWaiting)
        #expect(served.fileBody == nil)
        #expect(try served.read(0..<Int64(content.count)) == content)
        #expect(served.metadata == metadata)
        let offLoop = try store.open("hot")
        #expect(offLoop.fileBody == nil)
        FileSystemSeam.uninstall(recorder)

        #expect(recorder.calls.isEmpty, "file system calls on hits: \(recorder.calls)")
        #expect(store.core.queuedReads.load(ordering: .relaxed) == queuedBefore)
        #expect(store.memoryTierStatistics.hits == hitsBefore + 11)
    }

    /// The recorder sees the cache-only open too (`openat2`): a miss served from the page cache is
    /// counted, so an empty record on hits means something.
    @Test func theRecorderSeesTheOpenOfAMiss() async throws {
        let store = try store()
        try await store.put(MemoryTierTests.content(2), identifier: "cold")
        let recorder = CallRecorder(under: store.folderURL.path)
        FileSystemSeam.install(recorder)
        defer { FileSystemSeam.uninstall(recorder) }
        _ = try await store.get("cold")
        FileSystemSeam.uninstall(recorder)
        #expect(recorder.calls.contains { if case .open = $0 { return true } else { return false } })
        #expect(store.memoryTierStatistics.misses == 1)
        #expect(store.memoryTierStatistics.fills == 1)
    }

    /// blobd's paths: the first read of a small blob (on the loop when the page cache can answer,
    /// else off it) is read whole, checked and answered from memory; the next is a hit.
    @Test func theServersFirstReadFillsTheTierAndAnswersFromMemory() async throws {
        let store = try store()
        let content = MemoryTierTests.content(3, size: 40_000)
        try await store.put(content, identifier: "loop")
        let first = try store.openIfReady("loop") ?? store.open("loop")
        #expect(first.fileBody == nil && first.readsWithoutWaiting)
        #expect(try first.read(0..<40_000) == content)
        #expect(store.memoryTierStatistics.fills == 1)
        let second = try #require(store.openIfReady("loop"))
        #expect(second.fileBody == nil)
        #expect(store.memoryTierStatistics.hits == 1)
    }

    // MARK: - Never stale

    @Test func putRemoveAndRemoveAllDropTheEntry() async throws {
        let store = try store()
        try await store.put(MemoryTierTests.content(1), identifier: "a")
        try await store.put(MemoryTierTests.content(1), identifier: "b")
        _ = try await store.get("a")
        _ = try await store.get("b")
        #expect(store.memoryTierStatistics.entries == 2)

        try await store.put(MemoryTierTests.content(9), identifier: "a")
        #expect(store.memoryTierStatistics.entries == 1)
        #expect(try await store.get("a") == MemoryTierTests.content(9))
        #expect(try store.content(of: "a") == MemoryTierTests.content(9))

        try await store.remove("a")
        await #expect(throws: BlobStoreError.notFound(store: "tier", identifier: "a")) { try await store.get("a") }
        #expect(throws: BlobStoreError.notFound(store: "tier", identifier: "a")) { try store.content(of: "a") }
        #expect(store.openIfReady("a") == nil)

        #expect(try await store.get("b") == MemoryTierTests.content(1))
        try await store.removeAll()
        #expect(store.memoryTierStatistics.entries == 0)
        #expect(store.memoryTierStatistics.bytes == 0)
        await #expect(throws: BlobStoreError.notFound(store: "tier", identifier: "b")) { try await store.head("b") }
    }

    /// A read that took its ticket before a commit and read the old file must not fill the tier
    /// after the commit: the deterministic form of the race below.
    @Test func aFillWithATicketFromBeforeAChangeIsRefused() async throws {
        let store = try store()
        try await store.put(MemoryTierTests.content(1), identifier: "x")
        guard case .miss(let ticket) = store.core.memoryTier.lookup("x", now: { 0 }) else { Issue.record("hit before any read"); return }
        #expect(ticket != nil)
        let old = try store.core.cachedReads.content(of: "x") ?? queuedRead(store, "x")
        try await store.put(MemoryTierTests.content(2), identifier: "x")
        store.core.memoryTier.fill(old.header, content: old.content, ticket: ticket)
        #expect(store.memoryTierStatistics.entries == 0)
        #expect(try await store.get("x") == MemoryTierTests.content(2))

        // While a change of its shard is under way, a miss gets no ticket at all.
        let change: [Mutation] = [.remove(identifier: "x", condition: .none, durable: false)]
        store.core.memoryTier.willChange(change)
        guard case .miss(nil) = store.core.memoryTier.lookup("x", now: { 0 }) else {
            Issue.record("a lookup during a change got a ticket or a hit")
            return
        }
        store.core.memoryTier.didChange(change)
        guard case .miss(let after) = store.core.memoryTier.lookup("x", now: { 0 }) else { Issue.record("dropped entry still hit"); return }
        #expect(after != nil)
    }

    func queuedRead(_ store: PersistentDataStore, _ identifier: String) throws -> (header: BlobHeader, content: Data) {
        let blob = try store.core.reads.readNow { try store.core.reads.openCurrent(identifier) }
        defer { try? blob.descriptor.close() }
        return (blob.header, try store.core.reads.content(of: blob, range: 0..<blob.header.size))
    }

    /// Readers hammer one blob through every read path while a writer replaces and removes it: a
    /// read that starts after a change was acknowledged never sees what that change replaced or
    /// removed, and once the writer stops, reads give its last version.
    @Test(arguments: [true, false])
    func readsRacingChangesNeverSeeAnOlderVersion(inline: Bool) async throws {
        let store = try store(inline: inline)
        let race = RaceState()
        // Also when a change below throws: the readers would otherwise spin on after the test.
        defer { race.stop.store(true, ordering: .releasing) }
        let rounds = 300
        try await store.put(RaceState.content(0), identifier: "race")
        let group = DispatchGroup()
        for reader in 0..<2 {
            // Threads of their own: busy loops on Dispatch's pool would take the threads the store's queues need.
            group.enter()
            Thread {
                defer { group.leave() }
                while !race.stop.load(ordering: .acquiring) {
                    let floor = race.acknowledged.load(ordering: .acquiring)
                    if reader == 0 {
                        race.check(Result { try store.content(of: "race") }, floor: floor)
                    } else {
                        do {
                            let served = try store.openIfReady("race") ?? store.open("race")
                            let data = Result { try served.read(0..<served.metadata.size) }
                            served.close()
                            race.check(data, floor: floor)
                        } catch {
                            race.check(.failure(error), floor: floor)
                        }
                    }
                }
            }.start()
        }
        let asyncReader = Task.detached {
            while !race.stop.load(ordering: .acquiring) {
                let floor = race.acknowledged.load(ordering: .acquiring)
                let outcome: Result<Data, any Error>
                do { outcome = .success(try await store.get("race")) } catch { outcome = .failure(error) }
                race.check(outcome, floor: floor)
                _ = try? await store.head("race")
                // Hits never suspend: without a yield this loop would keep a pool thread from the writer.
                await Task.yield()
            }
        }
        for i in 1...rounds {
            race.started.store(i, ordering: .releasing)
            if RaceState.isRemove(i) { try await store.remove("race") } else { try await store.put(RaceState.content(i), identifier: "race") }
            race.acknowledged.store(i, ordering: .releasing)
            if i % 50 == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        try await Task.sleep(for: .milliseconds(20))
        race.stop.store(true, ordering: .releasing)
        await asyncReader.value
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(race.problems.withLock { $0 }.isEmpty, "\(race.problems.withLock { $0.prefix(5) })")
        #expect(race.reads.load(ordering: .relaxed) > rounds)
        // The last change was a remove: put once more, then read through the tier.
        try await store.put(RaceState.content(rounds + 1), identifier: "race")
        #expect(try await store.get("race") == RaceState.content(rounds + 1))
        #expect(try await store.get("race") == RaceState.content(rounds + 1))
        #expect(try store.content(of: "race") == RaceState.content(rounds + 1))
        let stats = store.memoryTierStatistics
        #expect(stats.hits > 0 && stats.invalidations > 0, "\(stats)")
    }

    /// A repair moves damaged files away in a barrier that drops every entry: the tier, which held the
    /// version as committed, stops serving it once the file is gone.
    @Test func aRepairDropsEveryEntry() async throws {
        let store = try store()
        try await store.put(MemoryTierTests.content(4), identifier: "rot")
        #expect(try await store.get("rot") == MemoryTierTests.content(4))
        // Damage the file behind the store's back: the tier still serves the committed version.
        let path = store.core.queue.sync { store.core.index.path(of: "rot") }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0xFF]))
        try handle.close()
        #expect(try await store.get("rot") == MemoryTierTests.content(4))
        let report = try await store.verify(repair: true)
        #expect(report.corrupt.count == 1)
        #expect(store.memoryTierStatistics.entries == 0)
        await #expect(throws: BlobStoreError.notFound(store: "tier", identifier: "rot")) { try await store.get("rot") }
    }

    // MARK: - Bound, size cap, eviction

    @Test func chargedBytesStayWithinTheBudgetAndEvict() async throws {
        let budget = 64 * 1024
        let store = try store(budget: budget)
        func name(_ i: Int) -> String { "blob-" + String(1000 + i) }
        for i in 0..<100 { try await store.put(MemoryTierTests.content(i, size: 2048), identifier: name(i)) }
        for i in 0..<100 {
            #expect(try await store.get(name(i)) == MemoryTierTests.content(i, size: 2048))
            let stats = store.memoryTierStatistics
            #expect(stats.bytes <= budget)
        }
        let stats = store.memoryTierStatistics
        let cost = MemoryTier.cost(contentBytes: 2048, headerLength: BlobHeader.fixedLength + "blob-1000".utf8.count + "application/octet-stream".utf8.count + 8)
        #expect(stats.fills == 100)
        #expect(stats.evictions == 100 - stats.entries)
        #expect(stats.entries >= budget / cost - 1 && stats.entries <= budget / cost, "\(stats), cost \(cost)")
        #expect(stats.bytes == stats.entries * cost || stats.bytes <= budget)
    }

    @Test func onlyBlobsUpTo64KiBAreKept() async throws {
        let store = try store()
        try await store.put(MemoryTierTests.content(1, size: 64 * 1024), identifier: "fits")
        try await store.put(MemoryTierTests.content(1, size: 64 * 1024 + 1), identifier: "too-big")
        _ = try await store.get("fits")
        _ = try await store.get("too-big")
        _ = try store.open("too-big").close()
        _ = store.openIfReady("too-big")?.close()
        #expect(store.memoryTierStatistics.entries == 1)
        guard case .hit = store.core.memoryTier.lookup("fits", now: { 0 }) else {
            Issue.record("64 KiB not kept")
            return
        }
        #expect(store.openIfReady("too-big")?.fileBody != nil || !store.core.cachedReadsWork.load(ordering: .relaxed))
    }

    @Test func zeroTurnsTheTierOff() async throws {
        let store = try store(budget: 0)
        try await store.put(MemoryTierTests.content(1), identifier: "a")
        for _ in 0..<3 { _ = try await store.get("a") }
        #expect(store.memoryTierStatistics == MemoryTierStatistics(budgetBytes: 0))
    }

    @Test func instancesShareOneTierWithTheLargestBudget() async throws {
        let small = try store(budget: 10_000)
        let large = try store(budget: 1 << 20)
        let off = try store(budget: 0)
        #expect(small.memoryTierStatistics.budgetBytes == 1 << 20)
        try await small.put(MemoryTierTests.content(1), identifier: "a")
        _ = try await small.get("a")
        #expect(large.memoryTierStatistics.entries == 1)
        _ = try await off.get("a")
        #expect(large.memoryTierStatistics.hits == 0)
        _ = try await large.get("a")
        #expect(small.memoryTierStatistics.hits == 1)
    }

    @Test func aReadOnlyStoreHasNoTier() async throws {
        let writer = try store()
        try await writer.put(MemoryTierTests.content(1), identifier: "a")
        let reader = try PersistentDataStore(readingOnly: "tier", root: root.url)
        _ = try await reader.get("a")
        _ = try await reader.get("a")
        #expect(reader.memoryTierStatistics.entries == 0 && reader.memoryTierStatistics.hits == 0)
    }

    /// CLOCK: an entry hit since the hand last passed outlives entries that were not.
    @Test func recentlyHitEntriesOutliveTheOthers() {
        let tier = MemoryTier()
        func header(_ name: String) -> BlobHeader {
            BlobHeader(
                identifier: name, size: 100, checksum: 1, createdNanoseconds: 0, modifiedNanoseconds: 0, contentType: "t", userMetadata: [:],
                image: nil)
        }
        let cost = MemoryTier.cost(contentBytes: 100, headerLength: header("a").encodedLength)
        tier.raiseBudget(to: 4 * cost)
        func fill(_ name: String) {
            guard case .miss(let ticket) = tier.lookup(name, now: { 0 }) else { return }
            tier.fill(header(name), content: Data(count: 100), ticket: ticket)
        }
        for name in ["a", "b", "c", "d"] { fill(name) }
        #expect(tier.statistics.entries == 4)
        _ = tier.lookup("a", now: { 0 })
        _ = tier.lookup("b", now: { 0 })
        fill("e")
        #expect(tier.statistics.entries == 4 && tier.statistics.evictions == 1)
        #expect(["c", "d"].filter(tier.holds).count == 1)
        #expect(["a", "b", "e"].allSatisfy(tier.holds))
        _ = tier.lookup("a", now: { 0 })
        _ = tier.lookup("b", now: { 0 })
        fill("f")
        #expect(["a", "b", "f"].allSatisfy(tier.holds))
        #expect(tier.statistics.entries == 4 && tier.statistics.bytes <= 4 * cost)
    }
}

/// Records the file system calls made under one folder.
final class CallRecorder: FileSystemHook {
    let folder: String
    private let recorded = Locked<[FileSystemCall]>([])
    private let descriptors = Locked<Set<Int32>>([])

    init(under folder: String) { self.folder = folder }

    var calls: [FileSystemCall] { recorded.withLock { $0 } }

    func willPerform(_ call: FileSystemCall) throws(Errno) {
        if case .close(let descriptor) = call, descriptors.withLock({ $0.remove(descriptor) }) != nil {
            recorded.withLock { $0.append(call) }
        }
    }

    func didPerform(_ call: FileSystemCall) {
        switch call {
        case .open(let path, _, let descriptor) where path.hasPrefix(folder):
            descriptors.withLock { _ = $0.insert(descriptor) }
            recorded.withLock { $0.append(call) }
        case .rename(let from, let to) where from.hasPrefix(folder) || to.hasPrefix(folder):
            recorded.withLock { $0.append(call) }
        case .unlink(let path) where path.hasPrefix(folder):
            recorded.withLock { $0.append(call) }
        default:
            break
        }
    }
}

/// What the race test's readers share with its writer.
final class RaceState: Sendable {
    /// The last change acknowledged, and the last one started (1...: every fifth a remove, the others
    /// a put of version `i`).
    let acknowledged = Atomic<Int>(0)
    let started = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let reads = Atomic<Int>(0)
    let problems = Locked<[String]>([])

    static func isRemove(_ i: Int) -> Bool { i > 0 && i % 5 == 0 }

    static func content(_ i: Int) -> Data {
        var data = withUnsafeBytes(of: Int64(i)) { Data($0) }
        data.append(MemoryTierTests.content(i, size: 500 + i % 3000))
        return data
    }

    static func version(_ data: Data) -> Int { Int(data.prefix(8).withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }) }

    /// Checks one read's outcome against the changes acknowledged before it started.
    func check(_ outcome: Result<Data, any Error>, floor: Int) {
        reads.wrappingAdd(1, ordering: .relaxed)
        var problem: String?
        switch outcome {
        case .success(let data):
            let version = RaceState.version(data)
            if version < floor || RaceState.isRemove(version) || data != RaceState.content(version) {
                problem = "read version \(version) after change \(floor) was acknowledged"
            }
        case .failure(BlobStoreError.notFound):
            // Only a remove acknowledged or started since may explain a miss.
            let latest = started.load(ordering: .acquiring)
            if !(floor...max(floor, latest)).contains(where: RaceState.isRemove) { problem = "not found after change \(floor)" }
        case .failure(let error):
            problem = "read failed: \(error)"
        }
        if let problem { problems.withLock { $0.append(problem) } }
    }
}
