import BlobStore

/// What the router decided to do with a request head.
enum RequestAction {
    /// Answer now (built on the loop: nothing in it waited on a store).
    case respond(Response)
    /// Stream the body into a backend upload (started, fed and committed off the loop), and answer
    /// with the upload's response.
    case upload(UploadStart)
    /// Switch the connection to a Server-Sent Events stream of changes (of `store`, or all),
    /// starting after `lastEventID` when the client is reconnecting.
    case events(store: String?, lastEventID: UInt64?)
    /// Answer with what `work` returns, computed in a task on the blocking-work threads of `lane`
    /// (for the backend's async calls).
    case offload(WorkLane, @Sendable () async -> Response)
    /// Answer with what `work` returns, computed on a blocking-work thread of `lane` (for the
    /// backend's synchronous calls: no task to create and resume).
    case offloadBlocking(WorkLane, @Sendable () -> Response)
}

/// Which pool of blocking-work threads runs an offloaded request. Scans (list, verify, totals) have
/// their own, so that however many of them run, gets, puts and removes still find a thread.
enum WorkLane: Sendable {
    /// Gets, puts, removes: short store calls.
    case quick
    /// Listings, verifies, statistics: calls that may read a whole store.
    case scan
}

/// How a put's upload starts and ends; run off the loop. (See ``EventLoop`` for the feeding.)
struct UploadStart: Sendable {
    /// Opens (creating) the store and the upload (blocking).
    let begin: @Sendable () throws -> OpenedUpload
    /// The response to a commit's outcome; ends the store claim.
    let finish: @Sendable (Result<BlobMetadata, any Error>, NewStoreClaim?) -> Response
}

/// An upload and the claim on the store it was started in (see ``StoreDirectory``). Used by one
/// thread at a time: the blocking-work job that feeds it, or the loop that holds it between jobs.
struct OpenedUpload: Sendable {
    let upload: any BackendUpload
    let claim: NewStoreClaim?

    /// Drops the upload and the claim (blocking: a temp file and maybe an empty store are removed).
    func abandon() {
        upload.cancel()
        claim?.end(committed: false)
    }
}
