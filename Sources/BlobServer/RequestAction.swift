import BlobProtocol
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
/// One object rather than closures, made once per PUT and passed by reference from step to step.
final class UploadStart: Sendable {
    /// What the body is.
    enum Purpose: Sendable {
        /// A blob's content (`PUT /v1/stores/{store}/blobs/{id}`), identifier and options validated.
        case blob(identifier: String, options: PutOptions)
        /// A store's policy update (`PUT /v1/stores/{store}`), whose commit leaves its response in `answer`.
        case policy(answer: PolicyAnswer)
    }

    let stores: StoreDirectory
    /// The store the put goes to, validated.
    let store: String
    let purpose: Purpose

    init(stores: StoreDirectory, store: String, purpose: Purpose) {
        self.stores = stores
        self.store = store
        self.purpose = purpose
    }

    /// A blob's upload.
    convenience init(stores: StoreDirectory, store: String, identifier: String, options: PutOptions) {
        self.init(stores: stores, store: store, purpose: .blob(identifier: identifier, options: options))
    }

    /// Opens (creating) the store and the upload (blocking); a policy update's commit will run on `pool`.
    func begin(pool: BlockingPool) throws -> OpenedUpload {
        let (backend, claim) = try stores.storeForPut(store)
        do {
            switch purpose {
            case .blob(let identifier, let options):
                return OpenedUpload(upload: try backend.startUpload(identifier: identifier, options: options), claim: claim)
            case .policy(let answer):
                return OpenedUpload(upload: PolicyUpload(store: backend, created: claim != nil, answer: answer, pool: pool), claim: claim)
            }
        } catch {
            claim?.end(committed: false)
            throw error
        }
    }

    /// The response to a commit's outcome; ends the store claim.
    func finish(_ result: Result<BlobMetadata, any Error>, _ claim: NewStoreClaim?) -> Response {
        if case .success = result { claim?.end(committed: true) } else { claim?.end(committed: false) }
        if case .policy(let answer) = purpose, case .success = result {
            return answer.response.withLock { $0 } ?? Router.errorResponse(APIError(.internalError, "the policy update left no answer"))
        }
        switch result {
        case .success(let metadata):
            // `created` is kept across overwrites, so it equals `modified` only for a new blob.
            let created = metadata.created == metadata.modified
            var response = Response(status: created ? .created : .ok, json: MetadataJSON.encode(metadata))
            Router.appendMetadataHeaders(metadata, into: &response)
            return response
        case .failure(let error):
            return Router.errorResponse(error)
        }
    }
}

/// An upload and the claim on the store it was started in (see ``StoreDirectory``).
///
/// The one place the daemon hands a put between threads: used by one thread at a time, the
/// blocking-work job that feeds it or the loop that holds it between jobs, each hand-off going
/// through the loop's inbox or a pool's queue (both locked, so each owner sees the last one's
/// writes). That discipline, not the upload (``BackendUpload`` is not `Sendable`), is why it is
/// `@unchecked Sendable`.
struct OpenedUpload: @unchecked Sendable {
    let upload: any BackendUpload
    let claim: NewStoreClaim?

    /// Drops the upload and the claim (blocking: a temp file and maybe an empty store are removed).
    func abandon() {
        upload.cancel()
        claim?.end(committed: false)
    }
}
