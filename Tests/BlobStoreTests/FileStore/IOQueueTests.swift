import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// Async calls do their file work on the I/O queue whose quality of service matches the calling task's
/// priority (`IOQueues`).
@Suite struct IOQueueTests {
    let root = TemporaryRoot()

    @Test func eachTaskPriorityMapsToTheQueueOfItsPool() throws {
        let queues = try PersistentDataStore(name: "map", root: root.url).core.ioQueues
        #expect(queues.matching(.high) === queues.userInitiated)
        #expect(queues.matching(.userInitiated) === queues.userInitiated)
        #expect(queues.matching(.medium) === queues.standard)
        #expect(queues.matching(.low) === queues.utility)
        #expect(queues.matching(.utility) === queues.utility)
        #expect(queues.matching(.background) === queues.utility)
        #expect(queues.forCurrentTask === queues.matching(Task.currentPriority))
    }

    /// Starts `body` in a detached task of `priority` and returns a task that awaits its result through a
    /// continuation: awaiting a task's value directly would escalate its priority to the awaiter's.
    func start(_ priority: TaskPriority, _ body: @escaping @Sendable () async throws -> Void) -> Task<Void, any Error> {
        let result = AsyncThrowingStream<Void, any Error> { continuation in
            Task.detached(priority: priority) {
                do {
                    try await body()
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
        return Task { for try await _ in result {} }
    }

    @Test func aPutWritesOnTheQueueOfItsTasksPriority() async throws {
        let store = try PersistentDataStore(name: "puts", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        let queues = store.core.ioQueues
        let release = hold(queues.userInitiated)
        let high = start(.high) { try await store.put(Data("high".utf8), identifier: "high") }
        // A put from a medium task uses the standard queue, so it completes while the other queue is held…
        try await start(.medium) { try await store.put(Data("medium".utf8), identifier: "medium") }.value
        #expect(try await store.get("medium") == Data("medium".utf8))
        // …and the high-priority put has not been written, because its queue is the held one.
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await store.exists("high") == false)
        release()
        try await high.value
        #expect(try await store.get("high") == Data("high".utf8))

        let releaseUtility = hold(queues.utility)
        let low = start(.background) { try await store.put(Data("low".utf8), identifier: "low") }
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await store.exists("low") == false)
        releaseUtility()
        try await low.value
        #expect(try await store.exists("low"))
    }
}
