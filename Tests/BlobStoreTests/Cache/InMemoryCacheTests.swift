@testable import BlobStore
import Foundation
import Testing

@Suite("Cache mode in the in-memory store")
struct InMemoryCacheTests {
    @Test func limitsHoldAtEveryPutAndCountersCount() async throws {
        let clock = TestClock()
        let store = try InMemoryBlobStore(name: "mem", policy: StorePolicy(maximumBytes: 1000, maximumCount: 8), clock: clock.storeClock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for number in 0..<25 {
                        _ = try await store.put(Data(repeating: 7, count: 100), identifier: "m\(writer)-\(number)", options: PutOptions())
                    }
                }
            }
            try await group.waitForAll()
        }
        let counters = try await store.cacheCounters()
        // Evicted under the lock as each put commits: never over.
        #expect(counters.peakCount <= 8)
        #expect(counters.peakBytes <= 1000)
        #expect(counters.count == 8)
        #expect(counters.evicted == 92)
        _ = try await store.put(Data("e".utf8), identifier: "expiring", options: PutOptions(expiry: .after(.seconds(1))))
        clock.advance(by: .seconds(1))
        await store.sweepExpired()
        #expect(try await store.cacheCounters().expired == 1)
    }

    /// The same CLOCK as the file store's: blobs never read leave in the order they were put.
    @Test func blobsNeverReadAreEvictedInTheOrderTheyWerePut() async throws {
        let store = try InMemoryBlobStore(name: "order", policy: StorePolicy(maximumCount: 2))
        for number in 0..<12 {
            _ = try await store.put(Data("\(number)".utf8), identifier: "p\(number)", options: PutOptions())
            let left = try await store.list(ListQuery()).items.map(\.identifier)
            #expect(Set(left) == Set((max(0, number - 1)...number).map { "p\($0)" }), "after p\(number): \(left)")
        }
    }

    @Test func aPutSweepsExpiredBlobs() async throws {
        let clock = TestClock()
        // The background sweep an hour away: the removal below is the put's.
        let store = try InMemoryBlobStore(name: "mem", policy: .unlimited, clock: clock.storeClock, sweepInterval: .seconds(3600))
        _ = try await store.put(Data("a".utf8), identifier: "a", options: PutOptions(expiry: .after(.seconds(1))))
        let changes = store.changes()
        clock.advance(by: .seconds(5))
        _ = try await store.put(Data("b".utf8), identifier: "b", options: PutOptions())
        var iterator = changes.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        #expect(first?.kind.isPut == true)
        #expect(second?.kind == .removed(identifier: "a") && second?.reason == .expired)
    }

    /// blobd's memory backend promises that an expired blob is removed with an `expired` event
    /// (PROTOCOL.md, "Expiry"), also in a store nobody writes to: the background sweep, every second
    /// of wall-clock time, finds what the store's clock says has expired, publishes the removal and
    /// drops the blob, with no put after it.
    @Test(.timeLimit(.minutes(1)))
    func anIdleStoreRemovesExpiredBlobsInTheBackground() async throws {
        let clock = TestClock()
        let store = try InMemoryBlobStore(name: "idle", clock: clock.storeClock)
        _ = try await store.put(Data("a".utf8), identifier: "a", options: PutOptions(expiry: .after(.seconds(1))))
        _ = try await store.put(Data("bb".utf8), identifier: "b", options: PutOptions())
        let changes = store.changes()
        clock.advance(by: .seconds(2))
        await #expect(throws: BlobStoreError.notFound(store: "idle", identifier: "a")) { try await store.get("a") }
        let change = await Self.firstChange(changes, within: .seconds(10))
        #expect(change?.kind == .removed(identifier: "a") && change?.reason == .expired, "\(String(describing: change))")
        // Counted only when the sweep drops the blob (statistics left it out from its expiry on).
        #expect(try await store.cacheCounters().expired == 1)
        #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 2))
        #expect(try await store.get("b") == Data("bb".utf8))
    }

    /// A background round removes at most 256 expired blobs, and one that removed 256 is followed by
    /// another at once on the sweep's queue, not a second later.
    @Test func aFullBackgroundRoundIsFollowedByAnotherAtOnce() async throws {
        let clock = TestClock()
        let store = try InMemoryBlobStore(name: "many", policy: .unlimited, clock: clock.storeClock, sweepInterval: .seconds(3600))
        for number in 0..<300 { _ = try await store.put(Data("\(number)".utf8), identifier: "e\(number)", options: PutOptions(expiry: .after(.seconds(1)))) }
        clock.advance(by: .seconds(1))
        // Held back, so that the round it queues waits until the first one is counted.
        let queue = DispatchQueue(label: "sweep-test")
        queue.suspend()
        store.sweepRound(on: queue)
        #expect(try await store.cacheCounters().expired == UInt64(InMemoryBlobStore.sweepBatch))
        queue.resume()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }  // after the queued round
        #expect(try await store.cacheCounters().expired == 300)
    }

    /// The store lets go of itself with its sweep started: the timer holds it weakly.
    @Test func theBackgroundSweepDoesNotKeepTheStoreAlive() async throws {
        weak var gone: InMemoryBlobStore?
        do {
            let store = try InMemoryBlobStore(name: "short")
            _ = try await store.put(Data("a".utf8), identifier: "a", options: PutOptions(expiry: .after(.seconds(60))))
            gone = store
        }
        #expect(gone == nil)
    }

    /// The next change, or `nil` when none comes within `limit`.
    static func firstChange(_ changes: AsyncStream<BlobChange>, within limit: Duration) async -> BlobChange? {
        await withTaskGroup(of: BlobChange?.self) { group in
            group.addTask {
                var iterator = changes.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

extension BlobChange.Kind {
    fileprivate var isPut: Bool {
        if case .put = self { return true }
        return false
    }
}
