import Dispatch

/// Where the article API runs the async store calls behind its completion handlers: on Dispatch's
/// threads, not the Swift concurrency pool.
///
/// The article API is called from code that is not async, and that code often blocks (a provider
/// that loads another blob and waits for it, an app's own queue waiting on a semaphore). The
/// concurrency pool has one thread per core; a call whose store work waited for a pool thread would
/// wait behind whatever blocks those threads, even the code waiting for that call. Dispatch adds
/// threads to its global queues while their threads are blocked, so the work always gets one.
final class ArticleTaskExecutor: TaskExecutor {
    /// The one executor every article call's task prefers.
    static let shared = ArticleTaskExecutor()

    private let queue = DispatchQueue(label: "blobstore.article-calls", attributes: .concurrent)

    /// Runs a job of a task that prefers this executor on one of the queue's threads.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
