import BlobClient
import BlobStore
import Foundation
import Testing

// Serialized, so that on the suite's own daemon only one test's change streams and events exist at a
// time (see `live(_:_:)` and `numbering(_:_:)`).
@Suite("Change events", .backends, .serialized, .timeLimit(.minutes(5)))
struct ChangeBehaviourTests {
    /// The next `count` events of `iterator` (the suite's time limit catches a store that never sends them).
    func next(_ count: Int, of iterator: inout AsyncStream<BlobChange>.Iterator) async -> [BlobChange] {
        var events: [BlobChange] = []
        while events.count < count, let event = await iterator.next() { events.append(event) }
        return events
    }

    /// Waits until exactly `count` change streams are live. The embedded stores' streams subscribe
    /// inside `changes()`; a remote store's subscribes when the daemon answers its request, after
    /// `changes()` returned (docs/CLIENT.md, "What differs from the embedded store"), so for it this polls the
    /// daemon's `blobd_event_subscribers` gauge, which counts only this test's streams here.
    func live(_ count: Int, _ store: any BlobStoring) async throws {
        guard let remote = store as? RemoteBlobStore else { return }
        var subscribers: Int?
        for _ in 0..<3000 {
            let metrics = try RawClient(path: remote.client.socketPath).request("GET", "/metrics").text
            subscribers = metrics.split(separator: "\n").first { $0.hasPrefix("blobd_event_subscribers ") }
                .flatMap { Int($0.split(separator: " ")[1]) }
            if subscribers == count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the daemon counts \(subscribers.map(String.init) ?? "no") event subscribers, expected \(count)")
    }

    /// The sequence numbers `events` must carry: 1, 2, … on an embedded store. On a remote store they
    /// are the daemon's event ids, which count the events of every store from the daemon's start time
    /// in microseconds (docs/PROTOCOL.md, "Change events"; docs/CLIENT.md): consecutive here too, as this suite has
    /// its daemon to itself and runs one test at a time.
    func numbering(_ events: [BlobChange], _ store: any BlobStoring) -> [UInt64] {
        let first: UInt64 = store is RemoteBlobStore ? events.first?.sequence ?? 1 : 1
        return (0..<UInt64(events.count)).map { first + $0 }
    }

    @Test("each committed change is one event, in order, numbered from 1", arguments: StoreKind.allCases)
    func kindsAndOrder(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await live(0, store)
            var iterator = store.changes().makeAsyncIterator()
            try await live(1, store)
            let a1 = try await store.put(Data("1".utf8), identifier: "a")
            let a2 = try await store.put(Data("2".utf8), identifier: "a")
            let b = try await store.put(chunks: chunkStream([Data("b".utf8)]), identifier: "b", options: PutOptions())
            #expect(try await store.remove("a"))
            #expect(try await store.remove("a") == false)  // missing: no event
            try await store.removeAll()
            let c = try await store.put(Data("c".utf8), identifier: "c")
            let events = await next(6, of: &iterator)
            #expect(events.map(\.kind) == [.put(a1), .put(a2), .put(b), .removed(identifier: "a"), .removedAll, .put(c)])
            #expect(events.map(\.sequence) == numbering(events, store))
            #expect(events.count == 6)
            #expect(events.allSatisfy { $0.store == store.name })
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.date <= $1.date })
        }
    }

    @Test(
        "removeAll is a change even on an empty store",
        arguments: StoreKind.allCases(
            except: .remote,
            because: "blobd creates and commits nothing for DELETE …/blobs of a store never written, so there is no event "
                + "(docs/CLIENT.md, What differs from the embedded store; docs/PROTOCOL.md, DELETE /v1/stores/{store}/blobs)"))
    func removeAllOnEmptyStore(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await live(0, store)
            var iterator = store.changes().makeAsyncIterator()
            try await live(1, store)
            try await store.removeAll()
            let marker = try await store.put(Data(), identifier: "marker")
            let events = await next(2, of: &iterator)
            #expect(events.map(\.kind) == [.removedAll, .put(marker)])
            #expect(events.map(\.sequence) == numbering(events, store))
            #expect(events.count == 2)
        }
    }

    @Test("failed and refused operations send nothing", arguments: StoreKind.allCases)
    func failuresAreSilent(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await live(0, store)
            var iterator = store.changes().makeAsyncIterator()
            try await live(1, store)
            let first = try await store.put(Data("x".utf8), identifier: "x", options: PutOptions(condition: .ifNoneMatch))
            _ = try? await store.put(Data("y".utf8), identifier: "x", options: PutOptions(condition: .ifNoneMatch))
            _ = try? await store.put(Data("y".utf8), identifier: "x", options: PutOptions(condition: .ifMatch(ETag(checksum: 1))))
            _ = try? await store.remove("x", condition: .ifMatch(ETag(checksum: 1)))
            _ = try? await store.remove("missing")
            _ = try? await store.remove("missing", condition: .ifMatch(first.etag))
            _ = try? await store.put(Data("y".utf8), identifier: "")
            _ = try? await store.put(Data("y".utf8), identifier: "bad", options: PutOptions(userMetadata: ["BAD": "x"]))
            _ = try? await store.putImage(Data("not an image".utf8), identifier: "img")
            _ = try? await store.put(Data("{".utf8), identifier: "rec", options: PutOptions(validation: .record))
            _ = try? await store.put(chunks: failingChunkStream([Data("z".utf8)]), identifier: "z", options: PutOptions())
            _ = try? await store.get("x")
            _ = try? await store.list(ListQuery())
            let marker = try await store.put(Data("marker".utf8), identifier: "marker")
            let events = await next(2, of: &iterator)
            #expect(events.map(\.kind) == [.put(first), .put(marker)])
            #expect(events.map(\.sequence) == numbering(events, store))
            #expect(events.count == 2)
        }
    }

    @Test("every subscriber gets every event; a late subscriber starts at the next sequence", arguments: StoreKind.allCases)
    func subscribers(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await live(0, store)
            var early1 = store.changes().makeAsyncIterator()
            var early2 = store.changes().makeAsyncIterator()
            try await live(2, store)
            let a = try await store.put(Data("a".utf8), identifier: "a")
            let b = try await store.put(Data("b".utf8), identifier: "b")
            var late = store.changes().makeAsyncIterator()
            try await live(3, store)
            try await store.remove("a")
            let expectedKinds: [BlobChange.Kind] = [.put(a), .put(b), .removed(identifier: "a")]
            let one = await next(3, of: &early1)
            let two = await next(3, of: &early2)
            #expect(one.map(\.kind) == expectedKinds)
            #expect(one.map(\.sequence) == numbering(one, store))
            #expect(one == two)
            let third = await next(1, of: &late)
            #expect(third.map(\.kind) == [.removed(identifier: "a")])
            #expect(third.map(\.sequence) == one.suffix(1).map(\.sequence))
        }
    }

    @Test("events from concurrent writers arrive in commit order with no gaps", arguments: StoreKind.allCases)
    func concurrentCommitOrder(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await live(0, store)
            var first = store.changes().makeAsyncIterator()
            var second = store.changes().makeAsyncIterator()
            try await live(2, store)
            let writers = 4, puts = 25
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for index in 0..<puts {
                            _ = try await store.put(Data("\(writer)-\(index)".utf8), identifier: "w\(writer)/\(index % 3)", options: PutOptions())
                        }
                    }
                }
                try await group.waitForAll()
            }
            let total = writers * puts
            let one = await next(total, of: &first)
            let two = await next(total, of: &second)
            #expect(one.map(\.sequence) == numbering(one, store))
            #expect(one.count == total)
            #expect(one == two)
            // Per writer, the puts appear in the order that writer made them.
            for writer in 0..<writers {
                let etags = one.compactMap { event -> ETag? in
                    guard case .put(let metadata) = event.kind, metadata.identifier.hasPrefix("w\(writer)/") else { return nil }
                    return metadata.etag
                }
                #expect(etags == (0..<puts).map { expectedETag(Data("\(writer)-\($0)".utf8)) })
            }
        }
    }
}
