import Dispatch

/// The concurrent queues on which a store writes temp files and streams content outside its barrier,
/// one per quality of service; async calls take the one that matches the calling task's priority.
///
/// Why several: on Linux, Dispatch drains each quality of service on its own pool of threads, and Swift
/// runs a task on the pool of its priority. A hop from a task to a queue of another quality of service
/// wakes a parked thread of the other pool, and the task's resumption wakes one back; within one pool
/// the thread that resumes the task usually finds the next hop queued before it parks, so a round trip
/// costs one wake-up instead of two (measured here: an async 4 KiB put took about 1.6× as long across
/// pools; see docs/BENCHMARKS.md, "Queues and task priorities").
struct IOQueues: Sendable {
    /// For tasks of `.high` (`.userInitiated`) priority or above.
    let userInitiated: DispatchQueue
    /// For `.medium` tasks — what `Task {}`, `Task.detached {}` and an async `main` run at — and for
    /// callers that are not tasks (the completion-handler API).
    let standard: DispatchQueue
    /// For `.low` (`.utility`) and `.background` tasks.
    let utility: DispatchQueue

    init(label: String) {
        userInitiated = DispatchQueue(label: label + ".user-initiated", qos: .userInitiated, attributes: .concurrent)
        standard = DispatchQueue(label: label, qos: .default, attributes: .concurrent)
        utility = DispatchQueue(label: label + ".utility", qos: .utility, attributes: .concurrent)
    }

    /// The queue whose threads share a pool with tasks of `priority`.
    func matching(_ priority: TaskPriority) -> DispatchQueue {
        if priority >= .high { return userInitiated }
        if priority >= .medium { return standard }
        return utility
    }

    /// The queue for the calling task's priority (``standard`` outside a task).
    var forCurrentTask: DispatchQueue { matching(Task.currentPriority) }
}
