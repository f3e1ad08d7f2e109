/// A PUT's body on its way into a backend upload.
///
/// The loop that owns the connection decodes the body and stages its bytes here; one job at a time
/// on a blocking-work thread takes what is staged and opens the upload (first job), appends, and
/// once the body is complete commits — so the disk writes and the commit never run on the loop,
/// and the bytes of one upload are appended in order. While a job runs, the loop stages the next
/// bytes, up to ``stageLimit``; then it stops reading the socket until the job has taken them.
///
/// Owned by the loop: only the loop thread reads or writes it. A job is given copies of what it
/// needs and hands the feed back to the loop untouched (hence `@unchecked Sendable`).
final class UploadFeed: @unchecked Sendable {
    /// How the upload begins and what its outcome answers.
    let start: UploadStart
    /// The request's `Content-Length` (0 when chunked).
    let declaredLength: Int64
    /// The upload once a job has opened it; the loop holds it between jobs.
    var opened: OpenedUpload?
    /// A job has the upload now.
    var jobRunning = false
    /// Body bytes read but not yet handed to a job.
    var staged: [UInt8] = []
    /// The whole body has been read (and staged).
    var bodyComplete = false
    /// The client sent `Expect: 100-continue`: `100 Continue` goes out once the upload has begun.
    var continueOwed = false

    /// Bytes staged before the loop stops reading the socket for this connection.
    static let stageLimit = 1 << 20

    init(start: UploadStart, declaredLength: Int64) {
        self.start = start
        self.declaredLength = declaredLength
    }

    /// Whether the loop must stop reading the body until a job takes the staged bytes.
    var isFull: Bool { staged.count >= UploadFeed.stageLimit }
}

/// What one upload job did, reported back to the loop.
enum UploadStep: Sendable {
    /// The upload is open and has everything staged so far; the loop holds it until the next job.
    case fed(OpenedUpload)
    /// The upload could not begin (the store could not be opened, or refused the put): the body is
    /// discarded and this is the answer.
    case refused(any Error)
    /// Appending failed; the upload cancelled itself. The rest of the body is not read.
    case failed(any Error)
    /// The commit's outcome, as a response.
    case finished(Response)
}

extension UploadStep {
    /// Whether the upload never began.
    var isRefusal: Bool {
        if case .refused = self { return true }
        return false
    }
}
