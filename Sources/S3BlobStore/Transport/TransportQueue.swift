import Dispatch

/// Threads for the transport's blocking calls, so `async` code never blocks the cooperative pool.
///
/// Each call gets a serial queue of its own: on Linux a concurrent queue runs on at most as many
/// threads as there are CPUs, so two requests waiting on the network (or a listing waiting on its
/// own HEADs) would hold every one of them and stall the rest. Serial queues are served by threads
/// made as they are needed; the number of requests in flight is bounded by the transport's
/// connection limit instead.
package enum TransportQueue {
    /// Runs `body` on a thread of its own and resumes the caller with its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            detach { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs `body` on a thread of its own and returns at once.
    package static func detach(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "S3BlobStore.request").async(execute: body)
    }

    /// Runs `body` on a thread of its own, in `group`.
    package static func start(in group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "S3BlobStore.parallel").async(group: group, execute: body)
    }
}
