import BlobStore
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

    @Test func aPutSweepsExpiredBlobs() async throws {
        let clock = TestClock()
        let store = try InMemoryBlobStore(name: "mem", clock: clock.storeClock)
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
}

extension BlobChange.Kind {
    fileprivate var isPut: Bool {
        if case .put = self { return true }
        return false
    }
}
