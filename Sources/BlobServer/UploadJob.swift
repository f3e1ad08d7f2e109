import BlobStore
import BlobSystem

/// One step of a put for a blocking-work thread: open the upload (the first step), append what the
/// loop staged, and commit once the body is complete.
///
/// Built by the loop from the connection's ``UploadFeed``, with copies of what the step needs. The
/// job never reads or writes the feed: it carries it only to hand it back with the outcome, so the
/// loop can tell whether the connection still waits for it.
final class UploadJob: Sendable {
    let feed: UploadFeed
    /// The connection's descriptor, to find it again when the outcome comes back.
    let fd: Int32
    let start: UploadStart
    /// The upload opened by an earlier step, else `nil` (this step opens it).
    let opened: OpenedUpload?
    /// Body bytes to append.
    let bytes: [UInt8]
    /// The body is complete: commit after appending.
    let commit: Bool

    init(feed: UploadFeed, fd: Int32, start: UploadStart, opened: OpenedUpload?, bytes: [UInt8], commit: Bool) {
        self.feed = feed
        self.fd = fd
        self.start = start
        self.opened = opened
        self.bytes = bytes
        self.commit = commit
    }

    /// Runs the step (blocking). `report` gets the outcome exactly once: on this thread, or, for a
    /// commit the store completes later (a durable batch), on the thread that completes it. `pool`
    /// ends a new store's claim off that thread, and runs a policy update's commit.
    func run(pool: BlockingPool, report: @escaping @Sendable (UploadStep) -> Void) {
        let upload: OpenedUpload
        if let opened {
            upload = opened
        } else {
            do { upload = try start.begin(pool: pool) } catch { return report(.refused(error)) }
        }
        do {
            if !bytes.isEmpty { try bytes.withUnsafeBytes { try upload.upload.append($0) } }
        } catch {
            upload.claim?.end(committed: false)
            return report(.failed(error))
        }
        guard commit else { return report(.fed(upload)) }
        let start = start
        // A relaxed commit usually completes right here; a durable one on the store's commit
        // thread, which must not be held up by the end of a claim (which may remove a folder).
        upload.upload.commit { result in
            guard let claim = upload.claim else { return report(.finished(start.finish(result, nil))) }
            pool.submit { report(.finished(start.finish(result, claim))) }
        }
    }
}

/// The outcomes of the upload jobs that one blocking-work turn runs, handed to their loop together
/// (one post, so one wake-up of the loop for the lot) once the turn ends (``deliver()``). An outcome
/// that arrives after that — a commit the store completed later, on its commit thread — is posted
/// on its own.
///
/// Shared by the turn's thread and whichever threads complete its commits; `state` is under its lock.
final class UploadReports: Sendable {
    private struct Outcome: Sendable {
        let job: UploadJob
        let step: UploadStep
    }

    private let loop: EventLoop
    private let state = Locked<(outcomes: [Outcome], delivered: Bool)>(([], false))

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Runs `job`, keeping its outcome for ``deliver()`` (or posting it, if that has happened).
    func run(_ job: UploadJob, pool: BlockingPool) {
        job.run(pool: pool) { step in self.report(step, of: job) }
    }

    private func report(_ step: UploadStep, of job: UploadJob) {
        let kept = state.withLock { state in
            if state.delivered { return false }
            state.outcomes.append(Outcome(job: job, step: step))
            return true
        }
        if !kept { loop.post { loop in loop.uploadStepped(job.feed, fd: job.fd, step: step) } }
    }

    /// Posts the outcomes kept so far to the loop, in the order of their jobs' completion; later
    /// ones are posted as they come.
    func deliver() {
        let outcomes = state.withLock { state in
            state.delivered = true
            return state.outcomes
        }
        guard !outcomes.isEmpty else { return }
        loop.post { loop in
            for outcome in outcomes { loop.uploadStepped(outcome.job.feed, fd: outcome.job.fd, step: outcome.step) }
        }
    }
}
