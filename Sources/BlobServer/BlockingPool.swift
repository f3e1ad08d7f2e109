import Foundation

/// Threads the server owns for store work, which may block on the disk or a store's barrier:
/// event-loop threads hand work here and get the answer back through their inbox
/// (``EventLoop/post(_:)``), so a slow store call never holds up the other connections of a loop,
/// and the Swift concurrency pool (one thread per core) never blocks.
///
/// It is also a `TaskExecutor`: async store calls (``BlobStore/ServedBackend``) run in tasks that
/// prefer this executor, so their code, and every continuation they resume, runs on these threads.
///
/// Threads are started as work arrives, up to `maximumThreads`, and then stay. Jobs run in the
/// order they were queued. The job queue is owned by `condition`'s lock.
final class BlockingPool: TaskExecutor, @unchecked Sendable {
    private enum Item {
        case block(@Sendable () -> Void)
        case job(UnownedJob)
    }

    let name: String
    private let maximumThreads: Int
    private let condition = NSCondition()
    private var items: [Item] = []
    private var head = 0
    private var threads = 0
    private var idle = 0

    init(name: String, maximumThreads: Int) {
        self.name = name
        self.maximumThreads = max(1, maximumThreads)
    }

    /// Runs `work` on a pool thread. Safe from any thread.
    func submit(_ work: @escaping @Sendable () -> Void) {
        append(.block(work))
    }

    /// Runs `work` in a task on this pool's threads, then `completion` with its result (on a pool
    /// thread). The task is created on a pool thread, so the caller (an event loop) only queues.
    func run<T: Sendable>(_ work: @escaping @Sendable () async -> T, then completion: @escaping @Sendable (T) -> Void) {
        submit { [self] in
            Task(executorPreference: self) { completion(await work()) }
        }
    }

    /// `TaskExecutor`: runs a job of a task that prefers this pool.
    func enqueue(_ job: consuming ExecutorJob) {
        append(.job(UnownedJob(job)))
    }

    private func append(_ item: Item) {
        condition.lock()
        items.append(item)
        // A thread more when the queued work outnumbers the threads waiting for it.
        let spawn = items.count - head > idle && threads < maximumThreads
        if spawn { threads += 1 }
        let number = threads
        condition.signal()
        condition.unlock()
        if spawn {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(number)"
            thread.start()
        }
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while head == items.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let item = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024 {
                items.removeFirst(head)
                head = 0
            }
            condition.unlock()
            switch item {
            case .block(let work): work()
            case .job(let job): job.runSynchronously(on: executor)
            }
        }
    }
}

/// The server's blocking-work pools, one per ``WorkLane``.
struct WorkPools: Sendable {
    /// Gets, puts, removes.
    let quick: BlockingPool
    /// Listings, verifies, statistics.
    let scan: BlockingPool

    /// Whether a store's small puts from one event loop run one after another in one job
    /// (``UploadLane``): worth it when the store's commits wait for each other anyway (file stores);
    /// not on S3, where puts of a store do not, and one stalled put would hold up the rest.
    let smallPutsShareAJob: Bool

    /// Quick threads enough that a store whose commits wait behind a long read (a barrier behind a
    /// listing's bucket) does not hold up the others.
    static let defaultQuickThreads = 16

    /// Pools of `quickThreads` and `scanThreads` threads at most.
    init(quickThreads: Int = WorkPools.defaultQuickThreads, scanThreads: Int = 4, smallPutsShareAJob: Bool = true) {
        quick = BlockingPool(name: "blobd-work", maximumThreads: quickThreads)
        scan = BlockingPool(name: "blobd-scan", maximumThreads: scanThreads)
        self.smallPutsShareAJob = smallPutsShareAJob
    }

    func pool(for lane: WorkLane) -> BlockingPool {
        switch lane {
        case .quick: quick
        case .scan: scan
        }
    }
}
