import BlobStore

/// What the router decided to do with a request head.
enum RequestAction {
    /// Answer now.
    case respond(Response)
    /// Stream the body into this upload, commit it, and answer with `finish`'s response.
    case upload(BlobUpload, finish: @Sendable (Result<BlobMetadata, any Error>) -> Response)
    /// Switch the connection to a Server-Sent Events stream of changes (of `store`, or all),
    /// starting after `lastEventID` when the client is reconnecting.
    case events(store: String?, lastEventID: UInt64?)
    /// Answer later: `start` is called with a function to call (from any thread) with the response.
    case deferred(start: (@escaping @Sendable (Response) -> Void) -> Void)
}
