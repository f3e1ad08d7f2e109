import Dispatch

/// The concurrent queues on which a store writes temp files and streams content outside its barrier,
/// one per quality of service; async calls take the one that matches the calling task's priority.
///
/// Why several: a hop to a queue and back costs thread wake-ups, which here cost more than a small
/// write. For `.medium` tasks (the usual caller), a queue at `.userInitiated` parked its worker as
/// soon as it had resumed the task, so every hop woke it again; at `.default` the worker picks up the
/// task's next hop before it parks. Tasks of other priorities get the queue of their own quality of
/// service on the same reasoning (the `put-relaxed` scenario of docs/BENCHMARKS.md measures it; the run that chose this is in commit 623bf89's BENCHMARKS.md).
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
