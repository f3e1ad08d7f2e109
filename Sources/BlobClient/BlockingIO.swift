import Dispatch

/// Runs blocking socket and file work off the cooperative pool, on a concurrent dispatch queue.
enum BlockingIO {
    /// The queue every blocking call of the client runs on.
    static let queue = DispatchQueue(label: "BlobClient.io", attributes: .concurrent)

    /// Runs `body` on ``queue`` and resumes the caller with its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
