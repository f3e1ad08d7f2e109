#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a `pthread_mutex_t`: the only way to reach it is ``withLock(_:)``.
///
/// Used instead of `Synchronization.Mutex` because on Linux that one waits on a raw futex, which the
/// thread sanitizer cannot see, so every access it guards would be reported as a race; a pthread
/// mutex is understood by the sanitizer, so `swift test --sanitize=thread` stays meaningful.
/// Unchecked `Sendable` on the same terms as `Mutex`: the value is reached only under the mutex.
package final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Wraps `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
