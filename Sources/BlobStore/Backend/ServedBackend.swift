import Foundation

/// A store as a server serves it: the operations `blobd`'s router needs, implemented by the file
/// store (``PersistentDataStore``), the in-memory store (``InMemoryBlobStore``) and any other
/// backend a daemon can serve.
///
/// ## Where each call runs
/// Only ``openIfReady(_:)`` may be called on a server's event-loop thread: it never waits (on the
/// disk, the network or a lock held across I/O) and answers `nil` when it cannot answer at once.
/// Every other requirement is called on the server's own blocking-work threads (the async ones in
/// tasks on their task executor), never on an event loop and never on the Swift concurrency pool,
/// so an implementation may block the calling thread on I/O, or await its own queues. The calls on
/// a request's path (open, upload) are synchronous or take a completion: a task per request would
/// cost more thread hand-offs than the work.
package protocol ServedBackend: AnyObject, Sendable {
    /// The store's name.
    var name: String { get }

    /// The current version of `identifier` when it can be had without waiting (from memory or the
    /// kernel's caches), else `nil` (the caller then uses ``open(_:)`` off the loop). Never blocks;
    /// `nil` also for every error (``open(_:)`` reports it).
    func openIfReady(_ identifier: String) -> (any ServedBlob)?

    /// The current version of `identifier`; throws ``BlobStoreError/notFound(store:identifier:)``.
    /// The version is pinned: later puts do not change what it reads. May block.
    func open(_ identifier: String) throws -> any ServedBlob

    /// Starts a put whose content arrives in pieces: validation of identifier and options happens
    /// here, of the content as it arrives and at the commit. May block.
    func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload

    /// Removes a blob if `condition` holds; returns whether it existed.
    func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool

    /// Removes every blob.
    func removeAll() async throws

    /// One page of blobs' metadata; see ``ListQuery``.
    func list(_ query: ListQuery) async throws -> ListPage

    /// Checks every blob; with `repair`, moves what is damaged or foreign aside (see
    /// ``PersistentDataStore/verify(repair:)``).
    func verify(repair: Bool) async throws -> VerificationReport

    /// Count and total content size.
    func statistics() async throws -> StoreStatistics

    /// Whether ``statistics()`` is answered from what this process keeps, without a request to
    /// another service: only then does a frequent scrape (`/metrics`) ask for it.
    var countsLocally: Bool { get }

    /// Calls `observer` with every change from now on, in commit order, before the change is
    /// acknowledged to its writer (so whoever sees the acknowledgement can rely on the observer
    /// having seen it). The observer must be quick and must not call back into the store.
    func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void)

    /// The store's cache policy (``StorePolicy/unlimited`` when it has none).
    func policy() async throws -> StorePolicy

    /// Stores `policy` with the store and applies it at once (eviction runs down to new limits).
    /// A backend that cannot keep such a policy throws ``UnsupportedPolicy``.
    func setPolicy(_ policy: StorePolicy) async throws

    /// The memory tier's figures, for a backend that has one (`nil` otherwise). Never blocks.
    var memoryTierFigures: MemoryTierStatistics? { get }

    /// What cache mode has done (``CacheCounters``), for a backend that keeps these counters (`nil` otherwise).
    func cacheFigures() async throws -> CacheCounters?
}

extension ServedBackend {
    /// Counted locally.
    package var countsLocally: Bool { true }

    /// No memory tier.
    package var memoryTierFigures: MemoryTierStatistics? { nil }

    /// No cache counters.
    package func cacheFigures() async throws -> CacheCounters? { nil }
}

/// One blob version opened for serving: its metadata and a way to its content, either bytes in
/// memory or a region of a file that a server sends with `sendfile`.
package protocol ServedBlob: Sendable {
    /// The version's metadata.
    var metadata: BlobMetadata { get }

    /// Whether ``read(_:)`` can answer without I/O that may wait (the content is in memory already).
    var readsWithoutWaiting: Bool { get }

    /// The file region to send with `sendfile` (and check as it goes), for a file-backed version;
    /// `nil` when the content is only in memory. Taking it passes ownership: the caller closes it.
    var fileBody: BlobReadHandle? { get }

    /// Content bytes `range` (clamped to the blob), checked against the version's checksum where
    /// the backend keeps one (a damaged blob throws ``BlobStoreError/corrupt(path:reason:)``). May block.
    func read(_ range: Range<Int64>) throws -> Data

    /// Releases what the version holds (an open file); later calls do nothing.
    func close()
}

/// A put being fed piece by piece. One owner calls it at a time, in order (the server passes it
/// from thread to thread, never using it on two at once); nothing is visible before ``commit()``.
package protocol BackendUpload: AnyObject {
    /// Appends content (may block). On error the upload is cancelled.
    func append(_ bytes: UnsafeRawBufferPointer) throws

    /// Validates and stores the content, honouring the put's condition; `completion` gets the new
    /// version's metadata or the error, on any thread (on the calling one before this returns, when
    /// the commit needed no waiting). May block.
    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void)

    /// Drops the upload and whatever it holds (may block briefly: a temp file is removed).
    func cancel()
}

/// Where a daemon's named stores live (a root folder, memory, a bucket), and how to open them.
/// Calls may block: a server makes them on its blocking-work threads, never on an event loop.
package protocol ServedBackendCatalog: Sendable {
    /// Whether store `name` exists (without opening or creating it). Throws when that cannot be
    /// told (an unreachable folder is an error, never "absent").
    func storeExists(_ name: String) throws -> Bool

    /// Opens store `name`, creating it if needed. Called once per store and daemon.
    func openStore(_ name: String) throws -> any ServedBackend

    /// Deletes store `name`, opened by ``openStore(_:)`` for a put that never committed (so it holds nothing).
    func discardStore(_ name: String, _ backend: any ServedBackend) throws

    /// The names of every store, opened or not, sorted byte-wise.
    func storeNames() throws -> [String]

    /// For stores among `names` that another process holds, who (`pid N`); empty when nobody or unknown.
    func otherHolders(of names: [String]) -> [String: String]

    /// Whether an upload's ``BackendUpload/commit(completion:)`` blocks its caller until another
    /// service answers (an object store's round trip): a server then gives each put a thread of its
    /// own, never a thread that commits other puts one after another.
    var commitsWaitForAnotherService: Bool { get }
}

extension ServedBackendCatalog {
    /// Commits need no other service.
    package var commitsWaitForAnotherService: Bool { false }
}

/// A store policy the store's backend cannot keep: an S3 store has no byte or count limit and no
/// default time to live, and refuses a policy with any of them. blobd answers it `422
/// unsupported_policy` (PROTOCOL.md, "Store policy"): the request was understood and is well formed,
/// and no other value of those settings would be taken either.
package struct UnsupportedPolicy: Error, Hashable, Sendable, CustomStringConvertible {
    /// The store that refused.
    package var store: String
    /// What the backend cannot keep, and what it honours instead.
    package var reason: String

    package init(store: String, reason: String) {
        self.store = store
        self.reason = reason
    }

    /// A sentence naming the store and the reason.
    package var description: String { "store '\(store)' cannot keep this policy: \(reason)" }
}
