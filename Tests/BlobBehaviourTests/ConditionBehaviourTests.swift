import BlobStore
import Foundation
import Testing

@Suite("Conditional writes", .backends, .timeLimit(.minutes(5)))
struct ConditionBehaviourTests {
    @Test("ifNoneMatch creates once and refuses the second time", arguments: StoreKind.allCases)
    func createOnly(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let createOnly = PutOptions(condition: .ifNoneMatch)
            let first = try await store.put(Data("first".utf8), identifier: "lock", options: createOnly)
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "lock", expected: nil, actual: first.etag)) {
                try await store.put(Data("second".utf8), identifier: "lock", options: createOnly)
            }
            #expect(try await store.get("lock") == Data("first".utf8))
            #expect(try await store.head("lock") == first)
            // Also refused when the new content is identical.
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "lock", expected: nil, actual: first.etag)) {
                try await store.put(chunks: chunkStream([Data("first".utf8)]), identifier: "lock", options: createOnly)
            }
            // After a remove it can be created again.
            try await store.remove("lock")
            let again = try await store.put(Data("again".utf8), identifier: "lock", options: createOnly)
            #expect(again.etag == expectedETag(Data("again".utf8)))
        }
    }

    @Test("ifMatch replaces only the expected version", arguments: StoreKind.allCases)
    func compareAndSwap(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let v1 = try await store.put(Data("v1".utf8), identifier: "doc")
            let v2 = try await store.put(Data("v2".utf8), identifier: "doc", options: PutOptions(condition: .ifMatch(v1.etag)))
            #expect(try await store.get("doc") == Data("v2".utf8))
            // v1's tag is stale now.
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "doc", expected: v1.etag, actual: v2.etag)) {
                try await store.put(Data("v3".utf8), identifier: "doc", options: PutOptions(condition: .ifMatch(v1.etag)))
            }
            let wrong = ETag(checksum: 0x1234)
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "doc", expected: wrong, actual: v2.etag)) {
                try await store.put(Data("v3".utf8), identifier: "doc", options: PutOptions(condition: .ifMatch(wrong)))
            }
            #expect(try await store.get("doc") == Data("v2".utf8))
            #expect(try await store.head("doc") == v2)
            // On an absent blob ifMatch fails and stores nothing.
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "absent", expected: v2.etag, actual: nil)) {
                try await store.put(Data("v2".utf8), identifier: "absent", options: PutOptions(condition: .ifMatch(v2.etag)))
            }
            #expect(try await store.exists("absent") == false)
            #expect(try await store.statistics().count == 1)
        }
    }

    @Test("conditional remove", arguments: StoreKind.allCases)
    func conditionalRemove(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let v1 = try await store.put(Data("v1".utf8), identifier: "doc")
            let wrong = ETag(checksum: 42)
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "doc", expected: wrong, actual: v1.etag)) {
                try await store.remove("doc", condition: .ifMatch(wrong))
            }
            #expect(try await store.exists("doc"))
            #expect(try await store.remove("doc", condition: .ifMatch(v1.etag)))
            #expect(try await store.exists("doc") == false)
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "doc", expected: v1.etag, actual: nil)) {
                try await store.remove("doc", condition: .ifMatch(v1.etag))
            }
            #expect(try await store.remove("doc", condition: .none) == false)
            // ifNoneMatch on a remove means "only if absent": refused when present, a no-op when absent.
            let v2 = try await store.put(Data("v2".utf8), identifier: "doc")
            await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "doc", expected: nil, actual: v2.etag)) {
                try await store.remove("doc", condition: .ifNoneMatch)
            }
            #expect(try await store.exists("doc"))
            #expect(try await store.remove("absent", condition: .ifNoneMatch) == false)
        }
    }

    @Test("of concurrent create-only puts exactly one wins", arguments: StoreKind.allCases)
    func createOnlyRace(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let contenders = 8, rounds = 24
            let winners = try await withThrowingTaskGroup(of: (Int, Int)?.self) { group in
                for round in 0..<rounds {
                    for contender in 0..<contenders {
                        group.addTask {
                            do {
                                _ = try await store.put(
                                    Data("owner \(contender)".utf8), identifier: "leader-\(round)", options: PutOptions(condition: .ifNoneMatch))
                                return (round, contender)
                            } catch BlobStoreError.preconditionFailed(_, _, nil, .some) {
                                return nil
                            }
                        }
                    }
                }
                var winners: [Int: [Int]] = [:]
                for try await result in group {
                    if let (round, contender) = result { winners[round, default: []].append(contender) }
                }
                return winners
            }
            for round in 0..<rounds {
                let roundWinners = winners[round] ?? []
                #expect(roundWinners.count == 1, "round \(round): winners \(roundWinners)")
                if let winner = roundWinners.first {
                    #expect(try await store.get("leader-\(round)") == Data("owner \(winner)".utf8))
                }
            }
        }
    }

    @Test("compare-and-swap increments from concurrent tasks are never lost", arguments: StoreKind.allCases)
    func compareAndSwapCounter(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await store.put(Data("0".utf8), identifier: "counter")
            let tasks = 4, increments = 25
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<tasks {
                    group.addTask {
                        var conflicts = 0
                        for _ in 0..<increments {
                            while true {
                                // ETags are content checksums, so the ETag of what was read is the version to swap.
                                let data = try await store.get("counter")
                                let value = Int(String(decoding: data, as: UTF8.self))!
                                do {
                                    _ = try await store.put(
                                        Data("\(value + 1)".utf8), identifier: "counter", options: PutOptions(condition: .ifMatch(expectedETag(data))))
                                    break
                                } catch BlobStoreError.preconditionFailed {
                                    conflicts += 1
                                    await Task.yield()
                                }
                            }
                        }
                        return conflicts
                    }
                }
                for try await _ in group {}
            }
            #expect(try await store.get("counter") == Data("\(tasks * increments)".utf8))
        }
    }
}
