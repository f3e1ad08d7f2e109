internal import BlobSystem
import Dispatch

/// Runs blocking S3 requests a few at a time on threads of their own (``BlockingThreads``), for the operations that
/// touch many keys (a listing's HEADs, remove-all's DELETEs, verify's GETs).
enum S3Parallel {
    /// `body` of every item, at most `width` at once, results in the items' order. The calling
    /// thread waits (a blocking-work thread, never the cooperative pool). After
    /// the first error no new item starts, and that error is thrown.
    static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], width: Int, _ body: @escaping @Sendable (Item) throws -> Result
    ) throws -> [Result] {
        guard items.count > 1 else { return try items.map(body) }
        let shared = Locked(S3ParallelProgress<Result>(results: Array(repeating: nil, count: items.count)))
        let group = DispatchGroup()
        for _ in 0..<min(width, items.count) {
            BlockingThreads.start(in: group) {
                while true {
                    let index = shared.withLock { state -> Int? in
                        guard state.failure == nil, state.next < items.count else { return nil }
                        defer { state.next += 1 }
                        return state.next
                    }
                    guard let index else { return }
                    do {
                        let result = try body(items[index])
                        shared.withLock { $0.results[index] = result }
                    } catch {
                        shared.withLock { state in if state.failure == nil { state.failure = error } }
                    }
                }
            }
        }
        group.wait()
        return try shared.withLock { state in
            if let failure = state.failure { throw failure }
            return state.results.map { $0! }
        }
    }
}

/// What the workers of one ``S3Parallel/map(_:width:_:)`` share, under its lock.
struct S3ParallelProgress<Result> {
    var next = 0
    var results: [Result?]
    var failure: (any Error)?
}
