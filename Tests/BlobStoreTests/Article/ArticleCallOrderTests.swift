import BlobStore
import BlobSystem
import Dispatch
import Foundation
import Testing

/// The stores that offer the article's API.
enum ArticleStoreKind: String, CaseIterable, Sendable {
    case memory, file
}

/// The article's call order (``ArticleDataStoring``): calls made one after another take effect in that
/// order without waiting for their handlers; reads run side by side.
@Suite struct ArticleCallOrderTests {
    let root = TemporaryRoot()

    func withArticleStore(_ kind: ArticleStoreKind, _ body: (any ArticleDataStoring) async throws -> Void) async throws {
        switch kind {
        case .memory:
            try await body(try InMemoryBlobStore(name: "article"))
        case .file:
            try await body(try PersistentDataStore(name: "article", root: root.url, configuration: StoreConfiguration(durability: .relaxed)))
        }
    }

    @Test(arguments: ArticleStoreKind.allCases)
    func randomSequencesMatchTheSequentialModel(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            // Fewer on disk, where every change is a commit; the order itself is the same code.
            let mismatch = await ArticleSequences.check(store, iterations: kind == .memory ? 1000 : 500, length: 12, seed: 0x0A7D_9EBA)
            #expect(mismatch == nil, "\(mismatch ?? "")")
        }
    }

    @Test(arguments: ArticleStoreKind.allCases)
    func loadRightAfterRemoveLoadsNothing(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            for round in 0..<200 {
                try await store.put(Data("v\(round)".utf8), identifier: "a")
                let (outcomes, _) = await ArticleSequences.run([.remove("a"), .load("a")], on: store)
                #expect(outcomes == [.removed(existed: true), .data(nil)], "round \(round)")
                if outcomes[1] != .data(nil) { return }
            }
        }
    }

    @Test(arguments: ArticleStoreKind.allCases)
    func loadRightAfterRemoveAllLoadsNothing(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            for round in 0..<200 {
                try await store.put(Data("v\(round)".utf8), identifier: "a")
                try await store.put(Data("w\(round)".utf8), identifier: "b")
                let (outcomes, _) = await ArticleSequences.run([.removeAll, .load("a"), .loadImage("b"), .load("b")], on: store)
                #expect(outcomes == [.removedAll, .data(nil), .image(width: nil), .data(nil)], "round \(round)")
                if outcomes != [.removedAll, .data(nil), .image(width: nil), .data(nil)] { return }
            }
        }
    }

    @Test(arguments: ArticleStoreKind.allCases)
    func loadRightAfterStoreLoadsTheNewData(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            for round in 0..<200 {
                let steps: [ArticleStep] = [
                    .store("a", value: "new\(round)", spin: 0), .load("a"), .storeImage("a", width: UInt32(round + 1)), .loadImage("a"),
                ]
                let (outcomes, _) = await ArticleSequences.run(steps, on: store)
                let expected: [ArticleOutcome] = [.stored("a"), .data(Data("new\(round)".utf8)), .stored("a"), .image(width: UInt32(round + 1))]
                #expect(outcomes == expected, "round \(round)")
                if outcomes != expected { return }
            }
        }
    }

    /// Stores opened on the same folder share one engine, and so one order.
    @Test func storesOnTheSameFolderShareTheOrder() async throws {
        let configuration = StoreConfiguration(durability: .relaxed)
        let first = try PersistentDataStore(name: "article", root: root.url, configuration: configuration)
        let second = try PersistentDataStore(name: "article", root: root.url, configuration: configuration)
        #expect(first.articleCallOrder === second.articleCallOrder)
        for round in 0..<200 {
            try await first.put(Data("v\(round)".utf8), identifier: "a")
            let queue = DispatchQueue(label: "handlers")
            first.removeData(forIdentifier: "a", completionQueue: queue)
            let loaded: Data? = await withCheckedContinuation { continuation in
                second.loadData(forIdentifier: "a", dataTransformer: { $0 }, completionQueue: queue) { continuation.resume(returning: $0) }
            }
            #expect(loaded == nil, "round \(round)")
            if loaded != nil { return }
        }
    }

    /// A load made while the provider of an earlier `storeData` is still running waits for it: ordering
    /// wins over the provider running outside the barrier.
    @Test(arguments: ArticleStoreKind.allCases)
    func loadAfterStoreWaitsForASlowProvider(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            try await store.put(Data("old".utf8), identifier: "a")
            let queue = DispatchQueue(label: "handlers")
            let providerMayReturn = DispatchSemaphore(value: 0)
            store.storeData({
                _ = providerMayReturn.wait(timeout: .now() + 60)
                return Data("new".utf8)
            }, identifier: "a", completionQueue: queue) { _ in }
            let loaded: Data? = await withCheckedContinuation { continuation in
                store.loadData(forIdentifier: "a", dataTransformer: { $0 }, completionQueue: queue) { continuation.resume(returning: $0) }
                providerMayReturn.signal()
            }
            #expect(loaded == Data("new".utf8))
        }
    }

    /// The provider is not inside any barrier: the async API, and article loads made before the
    /// `storeData`, are served while it runs.
    @Test(arguments: ArticleStoreKind.allCases)
    func slowProviderHoldsUpNeitherEarlierLoadsNorTheAsyncAPI(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            try await store.put(Data("r".utf8), identifier: "r")
            let queue = DispatchQueue(label: "handlers")
            let earlierLoadDone = DispatchSemaphore(value: 0)
            let asyncGetDone = DispatchSemaphore(value: 0)
            let sawBoth = Locked(false)
            store.loadData(forIdentifier: "r", dataTransformer: { $0 }, completionQueue: queue) { _ in earlierLoadDone.signal() }
            let stored: StoreDataResult = await withCheckedContinuation { continuation in
                store.storeData({
                    // Generous: the async get needs a thread of the 2-thread cooperative pool, which other
                    // tests running in parallel may hold for a long time with blocking waits.
                    let both = earlierLoadDone.wait(timeout: .now() + 300) == .success && asyncGetDone.wait(timeout: .now() + 300) == .success
                    sawBoth.withLock { $0 = both }
                    return Data("w".utf8)
                }, identifier: "w", completionQueue: queue) { continuation.resume(returning: $0) }
                Task {
                    _ = try? await store.get("r")
                    asyncGetDone.signal()
                }
            }
            guard case .success("w") = stored else {
                Issue.record("store failed: \(stored)")
                return
            }
            #expect(sawBoth.withLock { $0 })
        }
    }

    /// Calls a provider makes on its own thread come just before the store it feeds: after the calls
    /// made before that `storeData`, and they do not wait for it (which would deadlock).
    @Test(arguments: ArticleStoreKind.allCases)
    func providersOwnCallsComeJustBeforeItsStore(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            for round in 0..<100 {
                try await store.put(Data("1".utf8), identifier: "a")
                try await store.put(Data("x".utf8), identifier: "b")
                let queue = DispatchQueue(label: "handlers")
                let seen = Locked<(a: Data??, b: Data??)>((nil, nil))
                store.removeData(forIdentifier: "b", completionQueue: queue)
                let (outcomes, _) = await withCheckedContinuation { (continuation: CheckedContinuation<([ArticleOutcome?], [Int]), Never>) in
                    store.storeData({
                        // Reads "a" as it is before this store (appending to it), and "b" after the remove above.
                        let a = Self.syncLoad(store, "a")
                        let b = Self.syncLoad(store, "b")
                        seen.withLock { $0 = (a, b) }
                        return (a.flatMap { $0 } ?? Data()) + Data("2".utf8)
                    }, identifier: "a", completionQueue: queue) { _ in }
                    Task { continuation.resume(returning: await ArticleSequences.run([.load("a")], on: store)) }
                }
                let (a, b) = seen.withLock { $0 }
                #expect(a == .some(Data("1".utf8)), "round \(round)")
                #expect(b == .some(nil), "round \(round)")
                #expect(outcomes == [.data(Data("12".utf8))], "round \(round)")
                if outcomes != [.data(Data("12".utf8))] { return }
            }
        }
    }

    /// Two loads in flight at once: each one's transformer waits until the other's has started, which
    /// only ends if reads run side by side (a serial order would wait out the timeout and fail).
    @Test(arguments: ArticleStoreKind.allCases)
    func loadsRunSideBySide(kind: ArticleStoreKind) async throws {
        try await withArticleStore(kind) { store in
            try await store.put(Data("r".utf8), identifier: "r")
            let queue = DispatchQueue(label: "handlers")
            let started = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
            let results: [Bool] = await withCheckedContinuation { continuation in
                let collected = Locked([Bool]())
                for side in 0..<2 {
                    store.loadData(forIdentifier: "r", dataTransformer: { _ in
                        started[side].signal()
                        return started[1 - side].wait(timeout: .now() + 60) == .success
                    }, completionQueue: queue) { met in
                        let all = collected.withLock { $0.append(met ?? false); return $0 }
                        if all.count == 2 { continuation.resume(returning: all) }
                    }
                }
            }
            #expect(results == [true, true])
        }
    }

    /// Loads `identifier` through the article API and waits for it: `.some(nil)` when absent, `nil` on timeout.
    static func syncLoad(_ store: any ArticleDataStoring, _ identifier: String) -> Data?? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Data?>(nil)
        store.loadData(forIdentifier: identifier, dataTransformer: { $0 }, completionQueue: DispatchQueue(label: "inner")) { data in
            result.withLock { $0 = data }
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success else { return nil }
        return .some(result.withLock { $0 })
    }
}
