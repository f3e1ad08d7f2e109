@testable import BlobStore
import BlobSystem
import Foundation
import Testing

@Suite("Cache mode in the file store: sweeps, blocking reads, limits under concurrent puts", .timeLimit(.minutes(2)))
struct CacheEngineTests {
    @Test func theSweepRemovesExpiredFilesAndCountsThem() async throws {
        let root = TemporaryRoot()
        let clock = TestClock()
        let store = try PersistentDataStore(name: "sweep", root: root.url, configuration: StoreConfiguration(durability: .relaxed, bucketCapacity: 4, clock: clock.storeClock))
        for number in 0..<20 {
            try await store.put(Data("\(number)".utf8), identifier: "e\(number)", options: PutOptions(expiry: .after(.seconds(Int64(number + 1)))))
        }
        let path = try await store.core.reads.read { [core = store.core] in core.path(of: "e0") }
        #expect(FileManager.default.fileExists(atPath: path))
        clock.advance(by: .seconds(10))
        // Not yet removed, already not served.
        #expect(try await store.statistics() == StoreStatistics(count: 10, bytes: 20))
        await store.core.sweepCacheNow()
        let after = try await store.core.reads.read { [core = store.core] in core.path(of: "e0") }
        #expect(!FileManager.default.fileExists(atPath: after))
        let counters = try await store.cacheCounters()
        #expect(counters.expired == 10)
        #expect(counters.count == 10)
        let report = try await store.verify()
        #expect(report.healthy == 10 && report.corrupt.isEmpty && report.orphaned.isEmpty)
    }

    @Test func blockingAndServedReadsDoNotServeAnExpiredBlob() async throws {
        let root = TemporaryRoot()
        let clock = TestClock()
        let store = try PersistentDataStore(name: "blocking", root: root.url, configuration: StoreConfiguration(clock: clock.storeClock))
        try await store.put(Data("x".utf8), identifier: "x", options: PutOptions(expiry: .after(.seconds(1))))
        let handle = try store.openForReading("x")
        clock.advance(by: .seconds(1))
        #expect(throws: BlobStoreError.notFound(store: "blocking", identifier: "x")) { try store.openForReading("x") }
        #expect((store as any ServedBackend).openIfReady("x") == nil)
        #expect(throws: BlobStoreError.notFound(store: "blocking", identifier: "x")) { try (store as any ServedBackend).open("x") }
        // A handle opened before keeps its version.
        #expect(try handle.read(0..<1) == Data("x".utf8))
        handle.close()
    }

    /// The memory tier holds a version read before it expired; from its expiry on, no read path serves
    /// it from there either.
    @Test func theMemoryTierDoesNotServeAVersionThatExpiredWhileHeld() async throws {
        let root = TemporaryRoot()
        let clock = TestClock()
        let store = try PersistentDataStore(name: "tiered", root: root.url, configuration: StoreConfiguration(clock: clock.storeClock))
        try await store.put(Data("x".utf8), identifier: "x", options: PutOptions(expiry: .after(.seconds(1))))
        #expect(try await store.get("x") == Data("x".utf8))
        #expect(store.core.memoryTierHolds("x"))
        #expect(try store.content(of: "x") == Data("x".utf8))
        clock.advance(by: .seconds(1))
        let gone = BlobStoreError.notFound(store: "tiered", identifier: "x")
        await #expect(throws: gone) { try await store.get("x") }
        await #expect(throws: gone) { try await store.head("x") }
        #expect(try await !store.exists("x"))
        #expect(throws: gone) { try store.content(of: "x") }
        #expect((store as any ServedBackend).openIfReady("x") == nil)
        #expect(throws: gone) { try (store as any ServedBackend).open("x") }
        // The sweep's removal (this one, or the background one if it came first) drops the entry in
        // its barrier; nothing else would, since expired entries are only refused.
        await store.core.sweepCacheNow()
        #expect(!store.core.memoryTierHolds("x"))
    }

    /// A blob served from the memory tier counts as read for eviction: with a count limit of 2, the
    /// blob read (from memory) since the last round survives the next one, the other goes.
    @Test func aMemoryTierHitMarksTheBlobAsRecentlyUsed() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "marked", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumCount: 2)))
        try await store.core.settleCache()
        try await store.put(Data("a".utf8), identifier: "a")
        try await store.put(Data("b".utf8), identifier: "b")
        #expect(try store.content(of: "a") == Data("a".utf8))  // fills the tier
        #expect(store.core.memoryTierHolds("a"))
        for name in ["a", "b"] { _ = store.core.cache.marks.recency.takeMark(RecencyBits.slot(of: name)) }  // as a CLOCK hand passing
        #expect(try store.content(of: "a") == Data("a".utf8))  // a hit: the only read since
        try await store.put(Data("c".utf8), identifier: "c")
        try await store.core.settleCache()
        #expect(try await store.exists("a"))
        #expect(try await !store.exists("b"))
    }

    /// Eviction's removals drop their memory-tier entries in their barrier (STORAGE.md, "Memory
    /// tier"): a blob held by the tier and then evicted is neither held nor served from memory.
    @Test func anEvictedBlobLeavesTheMemoryTier() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "evicted", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumCount: 2)))
        try await store.core.settleCache()
        try await store.put(Data("hot".utf8), identifier: "hot")
        #expect(try await store.get("hot") == Data("hot".utf8))  // the miss that fills the tier
        #expect(store.core.memoryTierHolds("hot"))
        let invalidations = store.memoryTierStatistics.invalidations
        // The read gave "hot" a second chance, which the hand's first pass takes; as the puts go on
        // it comes round again (no read in between: any would mark "hot" again) and evicts it.
        for number in 0..<8 {
            try await store.put(Data("\(number)".utf8), identifier: "p\(number)")
            try await store.core.settleCache()
        }
        #expect(try await store.cacheCounters().evicted == 7)
        let left = try await store.list(ListQuery()).items.map(\.identifier)
        #expect(left.count == 2 && !left.contains("hot"), "\(left)")
        #expect(!store.core.memoryTierHolds("hot"), "the tier still holds an evicted blob")
        #expect(store.memoryTierStatistics.invalidations > invalidations)
        await #expect(throws: BlobStoreError.notFound(store: "evicted", identifier: "hot")) { try await store.get("hot") }
        #expect(throws: BlobStoreError.notFound(store: "evicted", identifier: "hot")) { try store.content(of: "hot") }
        #expect((store as any ServedBackend).openIfReady("hot") == nil)
    }

    /// STORAGE.md, "Eviction": a new blob goes just behind the hand, so blobs never read leave in the
    /// order they were put. At a count limit of 2, after each put the two last put are the ones left
    /// (the ring once moved the blob at the hand to a freed slot, and a newer blob went first).
    @Test func blobsNeverReadAreEvictedInTheOrderTheyWerePut() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "order", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumCount: 2)))
        try await store.core.settleCache()
        for number in 0..<12 {
            try await store.put(Data("\(number)".utf8), identifier: "p\(number)")
            try await store.core.settleCache()
            let left = try await store.list(ListQuery()).items.map(\.identifier)
            #expect(Set(left) == Set((max(0, number - 1)...number).map { "p\($0)" }), "after p\(number): \(left)")
        }
    }

    @Test func concurrentPutsStayWithinTheDocumentedOvershoot() async throws {
        let root = TemporaryRoot()
        let limit: Int64 = 64 * 1024
        let store = try PersistentDataStore(
            name: "bounded", root: root.url,
            configuration: StoreConfiguration(durability: .relaxed, bucketCapacity: 64, policy: StorePolicy(maximumBytes: limit)))
        try await store.core.settleCache()
        let writers = 8
        let perWriter = 60
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for number in 0..<perWriter {
                        try await store.put(Data(repeating: UInt8(number), count: 1024), identifier: "w\(writer)/\(number)", options: PutOptions())
                    }
                }
            }
            try await group.waitForAll()
        }
        try await store.core.settleCache()
        let counters = try await store.cacheCounters()
        let ceiling = CacheKeeper.ceiling(StorePolicy(maximumBytes: limit)).bytes!
        #expect(counters.peakBytes <= ceiling, "peak \(counters.peakBytes) over the ceiling \(ceiling)")
        #expect(counters.peakBytes > limit / 2)
        let statistics = try await store.statistics()
        #expect(statistics.bytes <= limit)
        #expect(Int(counters.evicted) == writers * perWriter - statistics.count)
        #expect(counters.waitingPuts == 0)
        let report = try await store.verify()
        #expect(report.healthy == statistics.count && report.corrupt.isEmpty && report.orphaned.isEmpty)
        #expect(try await store.list(ListQuery(limit: 1000)).items.count == statistics.count)
    }

    @Test func aBlobLargerThanTheSlackIsAdmittedAlone() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "large", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumBytes: 10_000)))
        try await store.core.settleCache()
        for number in 0..<5 { try await store.put(Data(repeating: 1, count: 1000), identifier: "small\(number)", options: PutOptions()) }
        try await store.put(Data(repeating: 2, count: 9_500), identifier: "large", options: PutOptions())
        try await store.core.settleCache()
        let statistics = try await store.statistics()
        #expect(statistics.bytes <= 10_000)
        #expect(try await store.exists("large"))
    }

    @Test func evictionTakesAHeadroomSoThatTheNextPutsEvictNothing() async throws {
        let root = TemporaryRoot()
        let limit = 128
        let store = try PersistentDataStore(
            name: "headroom", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumCount: limit)))
        try await store.core.settleCache()
        for number in 0..<limit { try await store.put(Data("\(number)".utf8), identifier: "h\(number)", options: PutOptions()) }
        try await store.core.settleCache()
        #expect(try await store.cacheCounters().evicted == 0)
        // One over: the round evicts that one plus one for every 64 blobs held (129 / 64 = 2).
        try await store.put(Data("over".utf8), identifier: "over", options: PutOptions())
        try await store.core.settleCache()
        let headroom = (limit + 1) / CacheCatalog.headroomDivisor
        #expect(try await store.statistics().count == limit - headroom)
        #expect(try await store.cacheCounters().evicted == UInt64(1 + headroom))
        // The next puts fill the headroom without an eviction.
        for number in 0..<headroom { try await store.put(Data("\(number)".utf8), identifier: "after\(number)", options: PutOptions()) }
        try await store.core.settleCache()
        #expect(try await store.statistics().count == limit)
        #expect(try await store.cacheCounters().evicted == UInt64(1 + headroom))
    }

    @Test func anEvictionRoundEndsWhenItsStoreIsGone() async throws {
        let root = TemporaryRoot()
        var kept: CacheKeeper?
        weak var core: StoreCore?
        do {
            let store = try PersistentDataStore(
                name: "gone", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumCount: 10)))
            try await store.core.settleCache()
            for number in 0..<5 { try await store.put(Data("\(number)".utf8), identifier: "g\(number)", options: PutOptions()) }
            kept = store.core.cache
            core = store.core
        }
        // Work the last relaxed puts left on the engine's queues (their syncs, reclaims) holds it for
        // a moment after the store goes.
        for _ in 0..<1000 where core != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(core == nil, "the engine outlived its store by 10 s")
        let keeper = try #require(kept)
        // Over the new limit: a round starts whose drops cannot commit (the engine is gone). It must
        // end, not retry the same victims forever on the cache queue.
        try keeper.setPolicy(StorePolicy(maximumCount: 1))
        let idle = AtomicFlag(false)
        keeper.queue.async { idle.store(true, ordering: .relaxed) }
        for _ in 0..<1000 where !idle.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(idle.load(ordering: .relaxed), "the cache queue is still running the round after 10 s")
    }

    /// A drop checks each victim's version against the catalog (which every barrier keeps), not by
    /// reading the victim's header back from its file: eviction costs its commit no lookup at all.
    @Test func evictionReadsNoVictimsHeaderInItsBarrier() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(name: "lookups", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        for number in 0..<20 { try await store.put(Data("\(number)".utf8), identifier: "l\(number)") }
        let before = store.core.commitLookups.load(ordering: .relaxed)
        try await store.setPolicy(StorePolicy(maximumCount: 4))
        try await store.core.settleCache()
        #expect(try await store.cacheCounters().evicted == 16)
        #expect(store.core.commitLookups.load(ordering: .relaxed) == before)
        let report = try await store.verify()
        #expect(report.healthy == 4 && report.isClean)
    }

    @Test func aBlobGoneBehindTheCatalogsBackDoesNotStallEviction() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "behind", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumCount: 5)))
        try await store.core.settleCache()
        for number in 0..<5 { _ = try await store.put(Data("\(number)".utf8), identifier: "g\(number)", options: PutOptions()) }
        // Removed outside the store (as a repair moves a damaged file aside): the catalog still lists it.
        let path = try await store.core.reads.read { [core = store.core] in core.path(of: "g0") }
        try FileManager.default.removeItem(atPath: path)
        for number in 5..<8 { _ = try await store.put(Data("\(number)".utf8), identifier: "g\(number)", options: PutOptions()) }
        try await store.core.settleCache()
        let statistics = try await store.statistics()
        #expect(statistics.count == 5)
        #expect(try await store.list(ListQuery()).items.count == 5)
    }

    /// Identifiers are bytes: "é" precomposed and decomposed are two blobs, which the catalog counts
    /// (and evicts) as two, though Swift's `String` calls them equal.
    @Test func canonicallyEquivalentIdentifiersAreTwoBlobsToEviction() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "bytes", root: root.url, configuration: StoreConfiguration(durability: .relaxed, policy: StorePolicy(maximumCount: 2)))
        try await store.core.settleCache()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        _ = try await store.put(Data("NFC".utf8), identifier: composed, options: PutOptions())
        _ = try await store.put(Data("NFD".utf8), identifier: decomposed, options: PutOptions())
        _ = try await store.put(Data("x".utf8), identifier: "x", options: PutOptions())
        try await store.core.settleCache()
        #expect(try await store.statistics().count == 2)
        // The oldest, never read, went; the other one is still there with its own content.
        await #expect(throws: BlobStoreError.self) { try await store.get(composed) }
        #expect(try await store.get(decomposed) == Data("NFD".utf8))
    }

    @Test func aCountLimitHoldsUnderConcurrentPuts() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "counted", root: root.url, configuration: StoreConfiguration(durability: .relaxed, bucketCapacity: 16, policy: StorePolicy(maximumCount: 40)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for number in 0..<50 { try await store.put(Data("\(number)".utf8), identifier: "c\(writer)-\(number)", options: PutOptions()) }
                }
            }
            try await group.waitForAll()
        }
        try await store.core.settleCache()
        let counters = try await store.cacheCounters()
        #expect(counters.peakCount <= 45)
        #expect(try await store.statistics().count <= 40)
    }
}

@Suite("Cache mode: reads racing eviction, expiry and puts", .timeLimit(.minutes(2)))
struct CacheRaceTests {
    /// The versions of each identifier: started and acknowledged puts (1, 2, …; 0 before any).
    final class Versions: Sendable {
        private let table = Locked<[Int: (started: Int, acknowledged: Int)]>([:])

        func start(_ number: Int) -> Int {
            table.withLock { table in
                let next = (table[number]?.started ?? 0) + 1
                table[number, default: (0, 0)].started = next
                return next
            }
        }

        func acknowledge(_ number: Int, _ version: Int) { table.withLock { $0[number]!.acknowledged = version } }
        func acknowledged(_ number: Int) -> Int { table.withLock { $0[number]?.acknowledged ?? 0 } }
        func started(_ number: Int) -> Int { table.withLock { $0[number]?.started ?? 0 } }
    }

    /// Version `version` of blob `number`: both in its first 16 bytes, a length and bytes of its own after.
    static func content(_ number: Int, version: Int) -> Data {
        var data = withUnsafeBytes(of: Int64(number)) { Data($0) }
        withUnsafeBytes(of: Int64(version)) { data.append(contentsOf: $0) }
        data.append(Data(repeating: UInt8(truncatingIfNeeded: number &* 31 &+ version), count: (number + version * 17) % 300))
        return data
    }

    static func decode(_ data: Data) -> (number: Int, version: Int)? {
        guard data.count >= 16 else { return nil }
        let bytes = [UInt8](data.prefix(16))
        let number = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: Int64.self) }
        let version = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: Int64.self) }
        return (Int(number), Int(version))
    }

    /// Readers, writers, eviction and sweeps at once (run under ThreadSanitizer too): every read gets
    /// not found, or the blob's own bytes of a version no older than the last one acknowledged
    /// before the read started — never another blob's bytes, a torn read, another error, or a version
    /// that eviction or expiry removed and a later put replaced (each writer owns its identifiers, so
    /// their versions are acknowledged in order).
    @Test(arguments: [true, false])
    func readsRacingEvictionAndExpiry(inlineCachedReads: Bool) async throws {
        let root = TemporaryRoot()
        let clock = TestClock()
        let store = try PersistentDataStore(
            name: "race", root: root.url,
            configuration: StoreConfiguration(
                durability: .relaxed, bucketCapacity: 8, inlineCachedReads: inlineCachedReads, policy: StorePolicy(maximumCount: 30),
                clock: clock.storeClock))
        let versions = Versions()
        let unexpected = Locked<[String]>([])
        let hits = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    for round in 0..<60 {
                        // Writer w puts the identifiers w, w + 3, … (33 of them, most twice).
                        let number = writer + 3 * (round % 33)
                        let expiry: BlobExpiry = round % 3 == 0 ? .after(.seconds(Int64(round % 7))) : .storeDefault
                        let version = versions.start(number)
                        try await store.put(Self.content(number, version: version), identifier: "r\(number)", options: PutOptions(expiry: expiry))
                        versions.acknowledge(number, version)
                        if round % 10 == 0 { clock.advance(by: .seconds(2)) }
                        if round % 20 == 0 { await store.core.sweepCacheNow() }
                    }
                }
            }
            for reader in 0..<3 {
                group.addTask {
                    for round in 0..<200 {
                        let number = (reader * 37 + round * 7) % 99
                        let floor = versions.acknowledged(number)
                        do {
                            let data = try await store.get("r\(number)")
                            let latest = versions.started(number)
                            if let (found, version) = Self.decode(data), found == number, (max(1, floor)...max(1, latest)).contains(version),
                                data == Self.content(number, version: version)
                            {
                                hits.withLock { $0 += 1 }
                            } else {
                                let what = Self.decode(data).map { "blob \($0.number) version \($0.version)" } ?? "\(data.count) bytes"
                                unexpected.withLock { $0.append("r\(number): \(what) after version \(floor) was acknowledged (\(latest) started)") }
                            }
                            _ = try await store.head("r\(number)")
                        } catch BlobStoreError.notFound {
                        } catch {
                            unexpected.withLock { $0.append("r\(number): \(error)") }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(unexpected.withLock { $0 }.isEmpty, "\(unexpected.withLock { $0 })")
        #expect(hits.withLock { $0 } > 0, "no read found a blob: the race checked nothing")
        try await store.core.settleCache()
        #expect(try await store.statistics().count <= 30)
        let report = try await store.verify()
        #expect(report.isClean)
    }
}
