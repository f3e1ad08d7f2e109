import Dispatch

/// Threads for blocking calls (sockets, files) made from `async` code, so that code never blocks
/// the cooperative pool. The daemon's client and the S3 transport run every exchange here.
///
/// Each call gets a serial queue of its own. On Linux a concurrent queue runs on about as many
/// threads as there are CPUs and adds one more at most once a second while they all block: two
/// requests waiting on their peer (or a change feed, which waits for as long as it is open) would
/// hold every thread, and each further call would wait up to a second for one. Serial queues are
/// served by threads made as they are needed, so a call starts at once; the number in flight is
/// bounded by the caller (a connection pool's limit, the caller's own concurrency).
package enum BlockingThreads {
    /// Runs `body` on a thread of its own and resumes the caller with its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            detach { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs `body` on a thread of its own and returns at once.
    package static func detach(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "BlobSystem.blocking").async(execute: body)
    }

    /// Runs `body` on a thread of its own, in `group`.
    package static func start(in group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "BlobSystem.blocking.grouped").async(group: group, execute: body)
    }
}
