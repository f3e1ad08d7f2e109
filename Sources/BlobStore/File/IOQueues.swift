import Dispatch

/// The concurrent queues on which a store writes temp files and streams content outside its barrier,
/// one per quality of service; async calls take the one that matches the calling task's priority.
///
/// Why several: Swift runs a task on Dispatch's global pool of its priority's quality of service, and a
/// hop to a queue and back costs thread wake-ups, which on this machine cost more than a 4 KiB write.
/// When the queue's quality of service matches the task's, the worker that resumes the task usually
/// picks up that task's next hop before it parks (`strace -f`: one `futex` wake per round trip); when
/// they differ, the worker parks at once and every hop wakes it again (measured here: an async 4 KiB
/// put took about 1.6× as long; see docs/BENCHMARKS.md, "Queues and task priorities").
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
