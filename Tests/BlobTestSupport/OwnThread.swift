import Foundation

/// Runs a blocking test body on a thread of its own and awaits its result, so that a test which
/// waits for seconds (on processes, sockets, a gateway's notifications) does not hold one of the
/// Swift concurrency pool's few threads meanwhile: tests running beside it in parallel would
/// otherwise starve past their time limits.
package func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
