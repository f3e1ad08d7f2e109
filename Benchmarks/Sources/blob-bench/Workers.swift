import Dispatch
import Foundation
import Synchronization

/// Runs blocking loops (the raw POSIX and article baselines) on dedicated threads and waits for them
/// from async code.
///
/// Dedicated threads, not tasks: the cooperative pool has only as many threads as cores (2 here), and
/// a task blocked in `write` or on a semaphore would starve everything else, the clock included.
enum Workers {
    /// Runs `body(0)`, …, `body(count - 1)` on `count` new threads at once; returns when all have
    /// finished, rethrowing the first error.
    static func run(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) async throws {
        let firstError = FirstError()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for index in 0..<count {
                group.enter()
                let thread = Thread {
                    do { try body(index) } catch { firstError.record(error) }
                    group.leave()
                }
                thread.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
        if let error = firstError.value { throw error }
    }

    /// Calls `work(index, done)` for `index` in `indices` one after another on the current thread, waiting
    /// each time until `work` calls `done(ok)`: a writer that waits for each completion handler, as a
    /// caller of the article's store would. Blocking.
    static func awaitEach(_ indices: StrideTo<Int>, _ work: (Int, @escaping @Sendable (Bool) -> Void) -> Void) throws {
        let semaphore = DispatchSemaphore(value: 0)
        let failures = FailureCount()
        let done: @Sendable (Bool) -> Void = { ok in
            if !ok { failures.value.add(1, ordering: .relaxed) }
            semaphore.signal()
        }
        for index in indices {
            work(index, done)
            semaphore.wait()
        }
        let count = failures.value.load(ordering: .relaxed)
        if count > 0 { throw BaselineFailure(count: count) }
    }

    /// Failed operations, counted from completion handlers on other threads.
    private final class FailureCount: Sendable {
        let value = Atomic<Int>(0)
    }

    /// The first error any worker threw.
    private final class FirstError: Sendable {
        private let storage = Mutex<(any Error)?>(nil)
        func record(_ error: any Error) { storage.withLock { if $0 == nil { $0 = error } } }
        var value: (any Error)? { storage.withLock { $0 } }
    }
}

/// Some operations of a baseline reported failure through their completion handlers.
struct BaselineFailure: Error, CustomStringConvertible {
    var count: Int
    var description: String { "\(count) baseline operation(s) failed" }
}
