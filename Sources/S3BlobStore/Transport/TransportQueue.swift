import Dispatch

/// Threads for the transport's blocking calls, so `async` code never blocks the cooperative pool.
package enum TransportQueue {
    /// The queue the blocking calls run on (concurrent: each request holds a thread while it waits).
    package static let queue = DispatchQueue(label: "S3BlobStore.transport", attributes: .concurrent)

    /// Runs `body` on ``queue`` and resumes the caller with its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
