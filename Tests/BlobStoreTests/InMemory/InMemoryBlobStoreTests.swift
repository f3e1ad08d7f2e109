@testable import BlobStore
import Foundation
import Testing

/// What only the in-memory store promises (the shared behaviour is in the other Behaviour suites).
@Suite("InMemoryBlobStore", .timeLimit(.minutes(1)))
struct InMemoryBlobStoreTests {
    @Test("the name is validated")
    func nameValidation() throws {
        #expect(try InMemoryBlobStore().name == "memory")
        #expect(try InMemoryBlobStore(name: "cache-1.v2_x").name == "cache-1.v2_x")
        for bad in ["", "Memory", "has space", ".hidden", "-dash", String(repeating: "a", count: 64), "a/b", "ü"] {
            #expect(throws: BlobStoreError.self, "name '\(bad)'") { try InMemoryBlobStore(name: bad) }
        }
        let error = #expect(throws: BlobStoreError.self) { try InMemoryBlobStore(name: "Bad") }
        guard case .invalidStoreName(let name, let reason) = error else {
            Issue.record("expected invalidStoreName, got \(String(describing: error))")
            return
        }
        #expect(name == "Bad")
        #expect(!reason.isEmpty)
    }

    @Test("a subscriber is removed when its consumer is cancelled or the stream is dropped")
    func subscriberCleanup() async throws {
        let store = try InMemoryBlobStore()
        #expect(store.subscriberCount == 0)
        let consumer = Task {
            var count = 0
            for await _ in store.changes() { count += 1 }
            return count
        }
        while store.subscriberCount < 1 { await Task.yield() }
        try await store.put(Data("x".utf8), identifier: "x")
        consumer.cancel()
        _ = await consumer.value
        #expect(store.subscriberCount == 0)

        do {
            let dropped = store.changes()
            #expect(store.subscriberCount == 1)
            _ = dropped
        }
        #expect(store.subscriberCount == 0)
        // Changes after that reach nobody and do not fail.
        try await store.put(Data("y".utf8), identifier: "y")
        #expect(store.subscriberCount == 0)
    }

    @Test("streams end when the store goes away")
    func streamsEndWithStore() async throws {
        var store: InMemoryBlobStore? = try InMemoryBlobStore()
        let changes = store!.changes()
        try await store!.put(Data("x".utf8), identifier: "x")
        weak let weakStore = store
        store = nil
        #expect(weakStore == nil)
        var events: [BlobChange] = []
        for await event in changes { events.append(event) }
        #expect(events.map(\.sequence) == [1])
    }

    @Test("stores are independent")
    func independentStores() async throws {
        let one = try InMemoryBlobStore(name: "one")
        let two = try InMemoryBlobStore(name: "two")
        try await one.put(Data("1".utf8), identifier: "x")
        #expect(try await two.exists("x") == false)
        await #expect(throws: BlobStoreError.notFound(store: "two", identifier: "x")) { try await two.get("x") }
        var changes = two.changes().makeAsyncIterator()
        try await two.put(Data("2".utf8), identifier: "x")
        #expect(await changes.next()?.sequence == 1, "sequence numbers are per store")
    }
}
