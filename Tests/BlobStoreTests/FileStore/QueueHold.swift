import Dispatch

/// Holds `queue` with a barrier work item, as a long commit would, until the returned closure is called;
/// returns once the barrier is running.
func hold(_ queue: DispatchQueue) -> @Sendable () -> Void {
    let gate = DispatchSemaphore(value: 0)
    let held = DispatchSemaphore(value: 0)
    queue.async(flags: .barrier) {
        held.signal()
        gate.wait()
    }
    held.wait()
    return { gate.signal() }
}
