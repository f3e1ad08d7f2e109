import BlobClient
@testable import BlobStore
import Foundation
import Testing

/// The kinds whose time a test clock can drive: the embedded stores. blobd runs on the system's
/// clock and takes no test clock over the wire, so the expiry tests, which advance a clock by
/// minutes, run on these only; expiry through blobd is tested in real time by the daemon's own
/// tests (`CacheModeWireTests`).
private let clockedCacheKinds: [StoreKind] = [.memory, .file, .fileQueuedReads]

/// The kinds for the tests that need no clock: the embedded stores and blobd, whose policy is set
/// through `RemoteBlobStore.setPolicy`. An S3 store has no cache policy by design
/// (docs/SCALE-OUT.md, "Design": no limits, no sweep; a put's own expiry is honoured, tested in
/// S3BlobStoreTests).
private let cacheKinds: [StoreKind] = [.memory, .file, .fileQueuedReads, .remote]

/// What a cache-mode test does to a store besides the ``BlobStoring`` calls.
private struct CacheControl {
    /// Runs the expiry sweep now (the file store's runs every second on its own).
    var sweep: () async throws -> Void
    /// Waits until eviction has brought the store within its limits.
    var settle: () async throws -> Void
    var setPolicy: (StorePolicy) async throws -> Void
    var policy: () async throws -> StorePolicy
    /// Returns once the change streams opened so far receive every later change (a remote store's
    /// subscribes only when the daemon answers its request, after `changes()` returned).
    var changesLive: () async throws -> Void = {}
}

/// Runs `body` with a fresh store of `kind` under `policy`, whose time is `clock`.
private func withCacheStore(
    _ kind: StoreKind, policy: StorePolicy = .unlimited, clock: TestClock, _ body: (any BlobStoring, CacheControl) async throws -> Void
) async throws {
    switch kind {
    case .memory:
        let store = try InMemoryBlobStore(name: "cache", policy: policy, clock: clock.storeClock)
        try await body(
            store,
            CacheControl(
                sweep: { await store.sweepExpired() }, settle: {}, setPolicy: { try await store.setPolicy($0) }, policy: { try await store.policy() }))
    case .file, .fileQueuedReads:
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "cache", root: root.url,
            configuration: StoreConfiguration(
                durability: .relaxed, bucketCapacity: 8, inlineCachedReads: kind == .file, policy: policy, clock: clock.storeClock))
        try await body(
            store,
            CacheControl(
                sweep: { await store.core.sweepCacheNow() }, settle: { try await store.core.settleCache() },
                setPolicy: { try await store.setPolicy($0) }, policy: { try await store.policy() }))
        withExtendedLifetime(root) {}
    case .remote:
        // A daemon of its own (this suite has no shared one): its event-subscriber gauge then counts
        // only this test's change streams.
        try await withStore(.remote) { store in
            let remote = try #require(store as? RemoteBlobStore)
            if policy != .unlimited { try await remote.setPolicy(policy) }
            try await body(
                remote,
                CacheControl(
                    sweep: { Issue.record("blobd sweeps on its own clock") }, settle: { try await settleRemote(remote) },
                    setPolicy: { try await remote.setPolicy($0) }, policy: { try await remote.policy() },
                    changesLive: { try await eventSubscribers(of: remote, reach: 1) }))
        }
    case .s3:
        Issue.record("an S3 store has no cache policy (docs/SCALE-OUT.md)")
    }
}

/// Waits (up to 20 s) until blobd's store is within its policy's limits, as its own `GET /v1/stores/{store}` reports.
private func settleRemote(_ store: RemoteBlobStore) async throws {
    var status = try await store.client.storeStatus(store.name)
    for _ in 0..<2000 {
        let bytesFit = status.policy.maximumBytes.map { status.statistics.bytes <= $0 } ?? true
        let countFits = status.policy.maximumCount.map { status.statistics.count <= $0 } ?? true
        if bytesFit && countFits { return }
        try await Task.sleep(for: .milliseconds(10))
        status = try await store.client.storeStatus(store.name)
    }
    Issue.record("blobd's store \(store.name) is still over its limits after 20 s: \(status)")
}

/// Waits (up to 30 s) until blobd counts `count` event subscribers (its `blobd_event_subscribers` gauge).
private func eventSubscribers(of store: RemoteBlobStore, reach count: Int) async throws {
    var subscribers: Int?
    for _ in 0..<3000 {
        let metrics = try RawClient(path: store.client.socketPath).request("GET", "/metrics").text
        subscribers = metrics.split(separator: "\n").first { $0.hasPrefix("blobd_event_subscribers ") }.flatMap { Int($0.split(separator: " ")[1]) }
        if subscribers == count { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("blobd counts \(subscribers.map(String.init) ?? "no") event subscribers, expected \(count)")
}

@Suite("Cache mode: expiry and eviction", .timeLimit(.minutes(2)))
struct CacheBehaviourTests {
    @Test("an expired blob is never served: get, head, exists, range, stream, download, list, statistics", arguments: clockedCacheKinds)
    func expiredIsNotServed(kind: StoreKind) async throws {
        let clock = TestClock()
        try await withCacheStore(kind, clock: clock) { store, _ in
            let start = clock.now
            let put = try await store.put(Data("short-lived".utf8), identifier: "a", options: PutOptions(expiry: .after(.seconds(60))))
            try await store.put(Data("forever".utf8), identifier: "b", options: PutOptions())
            #expect(put.expires == start.addingTimeInterval(60))
            #expect(try await store.head("a").expires == start.addingTimeInterval(60))
            #expect(try await store.head("b").expires == nil)

            clock.advance(by: .seconds(59))
            #expect(try await store.get("a") == Data("short-lived".utf8))
            #expect(try await store.statistics() == StoreStatistics(count: 2, bytes: 18))

            clock.advance(by: .seconds(1))  // exactly at the expiry: expired
            await #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "a")) { try await store.get("a") }
            await #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "a")) { try await store.head("a") }
            await #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "a")) { try await store.get("a", range: 0..<2) }
            await #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "a")) {
                try await store.stream("a", range: nil, chunkSize: 4)
            }
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("cache-\(UUID().uuidString)")
            await #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "a")) { try await store.download("a", to: target) }
            #expect(try await store.exists("a") == false)
            #expect(try await store.list(ListQuery()).items.map(\.identifier) == ["b"])
            #expect(try await store.list(ListQuery(sort: .modified)).items.map(\.identifier) == ["b"])
            #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 7))
            #expect(try await store.get("b") == Data("forever".utf8))
        }
    }

    @Test("the store's default time to live, .never, .at", arguments: clockedCacheKinds)
    func defaultTimeToLive(kind: StoreKind) async throws {
        let clock = TestClock()
        try await withCacheStore(kind, policy: StorePolicy(defaultTimeToLive: .seconds(10)), clock: clock) { store, control in
            let start = clock.now
            let defaulted = try await store.put(Data("d".utf8), identifier: "default", options: PutOptions())
            let never = try await store.put(Data("n".utf8), identifier: "never", options: PutOptions(expiry: .never))
            let at = try await store.put(Data("t".utf8), identifier: "at", options: PutOptions(expiry: .at(start.addingTimeInterval(100))))
            #expect(defaulted.expires == start.addingTimeInterval(10))
            #expect(never.expires == nil)
            #expect(at.expires == start.addingTimeInterval(100))
            #expect(try await control.policy() == StorePolicy(defaultTimeToLive: .seconds(10)))

            clock.advance(by: .seconds(10))
            #expect(try await store.exists("default") == false)
            #expect(try await store.exists("at"))
            clock.advance(by: .seconds(90))
            #expect(try await store.exists("at") == false)
            clock.advance(by: .seconds(1_000_000))
            #expect(try await store.get("never") == Data("n".utf8))
        }
    }

    @Test("conditions see an expired blob as absent; a remove of it answers false", arguments: clockedCacheKinds)
    func conditionsOnExpired(kind: StoreKind) async throws {
        let clock = TestClock()
        try await withCacheStore(kind, clock: clock) { store, _ in
            let old = try await store.put(Data("old".utf8), identifier: "k", options: PutOptions(expiry: .after(.seconds(5))))
            clock.advance(by: .seconds(5))
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "k", expected: old.etag, actual: nil)) {
                try await store.put(Data("swap".utf8), identifier: "k", options: PutOptions(condition: .ifMatch(old.etag)))
            }
            #expect(try await store.remove("k", condition: .none) == false)
            let created = try await store.put(Data("new".utf8), identifier: "k", options: PutOptions(condition: .ifNoneMatch))
            // A new blob, not a new version of the expired one.
            #expect(created.created == clock.now)
            #expect(try await store.get("k") == Data("new".utf8))
            #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 3))
        }
    }

    @Test("the sweep removes expired blobs with an .expired removal", arguments: clockedCacheKinds)
    func sweepEvents(kind: StoreKind) async throws {
        let clock = TestClock()
        try await withCacheStore(kind, clock: clock) { store, control in
            let changes = store.changes()
            try await store.put(Data("x".utf8), identifier: "gone", options: PutOptions(expiry: .after(.seconds(1))))
            try await store.put(Data("y".utf8), identifier: "kept", options: PutOptions())
            clock.advance(by: .seconds(2))
            try await control.sweep()
            var seen: [BlobChange] = []
            for await change in changes {
                seen.append(change)
                if seen.count == 3 { break }
            }
            #expect(seen[2].kind == .removed(identifier: "gone"))
            #expect(seen[2].reason == .expired)
            #expect(seen[0].reason == .requested)
            #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 1))
        }
    }

    @Test("over a count limit the least recently used go first; recently read blobs survive", arguments: cacheKinds)
    func evictionOrder(kind: StoreKind) async throws {
        let clock = TestClock()
        try await withCacheStore(kind, policy: StorePolicy(maximumCount: 10), clock: clock) { store, control in
            let changes = store.changes()
            try await control.changesLive()
            for number in 0..<10 { try await store.put(Data("\(number)".utf8), identifier: "blob-\(number)", options: PutOptions()) }
            for number in 0..<5 { _ = try await store.get("blob-\(number)") }
            for number in 10..<15 {
                try await store.put(Data("\(number)".utf8), identifier: "blob-\(number)", options: PutOptions())
                try await control.settle()
            }
            let listed = try await store.list(ListQuery()).items.map(\.identifier)
            #expect(Set(listed) == Set((0..<5).map { "blob-\($0)" } + (10..<15).map { "blob-\($0)" }))
            var evicted: [String] = []
            for await change in changes where change.reason == .evicted {
                if case .removed(let identifier) = change.kind { evicted.append(identifier) }
                if evicted.count == 5 { break }
            }
            #expect(Set(evicted) == Set((5..<10).map { "blob-\($0)" }))
        }
    }

    @Test("lowering the byte limit evicts down to it at once", arguments: cacheKinds)
    func setPolicyEvicts(kind: StoreKind) async throws {
        let clock = TestClock()
        try await withCacheStore(kind, clock: clock) { store, control in
            for number in 0..<20 { try await store.put(Data(repeating: UInt8(number), count: 100), identifier: "b\(number)", options: PutOptions()) }
            try await control.setPolicy(StorePolicy(maximumBytes: 1000))
            try await control.settle()
            #expect(try await control.policy() == StorePolicy(maximumBytes: 1000))
            let statistics = try await store.statistics()
            #expect(statistics.bytes <= 1000)
            #expect(statistics.count == 10)
        }
    }
}
