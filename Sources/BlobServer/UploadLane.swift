import BlobSystem

/// The small puts of one store from one event loop, run one after another by at most one
/// blocking-work job at a time.
///
/// A small put whose whole body came with its head needs one job (open, append, commit). Handing
/// each to a thread of its own cost a thread wake-up per put, and as many threads contending for the
/// store's commit as there were connections; a lane takes every such put that became ready in one
/// wake-up of the loop as one batch, keeps taking what queued meanwhile, and hands the outcomes of
/// each batch back in one post. Per store, so that a store whose commits wait (behind a long scan)
/// holds up only its own puts, which would wait for it anyway; per loop, so that loops do not
/// contend for a lane and commit work can use as many threads as there are loops.
///
/// Each job's outcome is its own (``UploadReports``): a put that fails answers only its request.
///
/// Ownership: `ready` is the loop's (touched only on its thread); `queue` is shared with the job
/// that drains it, under its lock. Hence `@unchecked Sendable`.
final class UploadLane: @unchecked Sendable {
    /// A put whose body is at most this long (and came whole) goes through a lane; larger ones get a
    /// job of their own, so that their appends run side by side.
    static let smallBody = 64 << 10

    private let loop: EventLoop
    private let pool: BlockingPool
    /// Jobs made ready during the current wake-up of the loop, not yet handed over (``dispatch()``).
    private(set) var ready: [UploadJob] = []
    /// Jobs handed over and not yet taken, and whether a job is draining the lane.
    private let queue = Locked<(jobs: [UploadJob], draining: Bool)>(([], false))

    init(loop: EventLoop, pool: BlockingPool) {
        self.loop = loop
        self.pool = pool
    }

    /// Adds a job for the end of the loop's wake-up. Loop thread only.
    func add(_ job: UploadJob) {
        ready.append(job)
    }

    /// Hands the jobs made ready to the lane's draining job, starting one if none runs. Loop thread only.
    func dispatch() {
        guard !ready.isEmpty else { return }
        let start = queue.withLock { queue in
            if queue.jobs.isEmpty { swap(&queue.jobs, &ready) } else { queue.jobs.append(contentsOf: ready) }
            defer { queue.draining = true }
            return !queue.draining
        }
        ready.removeAll(keepingCapacity: true)
        if start { pool.submit { self.drain() } }
    }

    /// Whether nothing is queued or running (a lane the loop may forget).
    var isIdle: Bool { ready.isEmpty && queue.withLock { !$0.draining && $0.jobs.isEmpty } }

    /// Jobs handed over and not yet taken by the draining job (for tests).
    var queuedCount: Int { queue.withLock { $0.jobs.count } }

    /// The draining job: takes everything queued as one batch, runs it, delivers its outcomes, and
    /// goes on until the queue is empty.
    private func drain() {
        var batch: [UploadJob] = []
        while true {
            queue.withLock { queue in
                swap(&queue.jobs, &batch)
                if batch.isEmpty { queue.draining = false }
            }
            if batch.isEmpty { return }
            let reports = UploadReports(loop: loop)
            for job in batch { reports.run(job, pool: pool) }
            reports.deliver()
            batch.removeAll(keepingCapacity: true)
        }
    }
}
