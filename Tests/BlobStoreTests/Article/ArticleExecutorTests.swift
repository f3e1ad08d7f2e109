import BlobStore
import BlobSystem
import Dispatch
import Foundation
import Testing

/// The article API's store work does not need a thread of the Swift concurrency pool: its callers
/// are not async and often block, and the pool has one thread per core.
@Suite struct ArticleExecutorTests {
    /// Every pool thread is held by a blocked task while an article load runs: it still completes.
    @Test func aLoadCompletesWhileEveryConcurrencyPoolThreadIsBlocked() async throws {
        let store = try InMemoryBlobStore()
        try await store.put(Data("x".utf8), identifier: "a")
        let loaded: Data? = await withCheckedContinuation { continuation in
            // Driven from a thread of its own: the test's task could not resume while the pool is held.
            Thread.detachNewThread {
                let width = ProcessInfo.processInfo.activeProcessorCount
                let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
                for _ in 0..<width {
                    Task.detached {
                        started.signal()
                        release.wait()
                    }
                }
                for _ in 0..<width { started.wait() }
                let done = DispatchSemaphore(value: 0)
                let result = Locked<Data?>(nil)
                store.loadData(forIdentifier: "a", dataTransformer: { $0 }, completionQueue: DispatchQueue(label: "loaded")) { data in
                    result.withLock { $0 = data }
                    done.signal()
                }
                let finished = done.wait(timeout: .now() + 10) == .success
                for _ in 0..<width { release.signal() }
                continuation.resume(returning: finished ? result.withLock { $0 } : nil)
            }
        }
        #expect(loaded == Data("x".utf8), "the load waited for a concurrency pool thread")
    }
}
