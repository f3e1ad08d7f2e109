#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Takes an exclusive `flock(2)` on this file, waiting up to `timeout` for another holder to
    /// release it; `false` when the time ran out or `giveUp` said waiting is pointless.
    ///
    /// `flock` has no timeout of its own, and a blocking one cannot be interrupted without signals,
    /// which a library must not install. So this polls: a non-blocking attempt, then a sleep that
    /// starts at 1 ms and doubles up to 50 ms (the thread sleeps in between, it does not spin), so a
    /// short-lived holder is followed within milliseconds and a long one costs at most 20 wake-ups a
    /// second. `giveUp` runs after each refused attempt (for example, to stop at once when the holder
    /// is a daemon that will not let go). Blocks the calling thread: never call it on the Swift
    /// concurrency pool or an event loop.
    package func lockExclusive(waitingUpTo timeout: Duration, giveUp: () -> Bool) throws(Errno) -> Bool {
        if try lock(exclusive: true, nonBlocking: true) { return true }
        if timeout <= .zero || giveUp() { return false }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause = Duration.milliseconds(1)
        while true {
            let left = clock.now.duration(to: deadline)
            if left <= .zero { return false }
            FileDescriptor.sleep(min(pause, left))
            if try lock(exclusive: true, nonBlocking: true) { return true }
            if giveUp() { return false }
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
