import BlobStore
import BlobSystem
import Foundation

/// The daemon's stores, opened once each through the backend's catalog and kept open for the
/// daemon's life (a `PersistentDataStore` is cheap to keep and holds the store's lock and caches;
/// an in-memory store is its own content).
///
/// A store is created by its first put that commits: a put to a store that does not exist creates
/// it (a file store's upload needs the store's temp folder) and holds a ``NewStoreClaim``; when every
/// put holding a claim on that store has failed and none committed, the store is discarded again, so
/// a refused PUT leaves no store behind. Until a put commits, reads treat the store as absent.
///
/// Owns `state` behind its mutex; every method may be called from any thread. Only
/// ``openedStore(_:)`` never blocks (event loops use it); the others may touch the disk or the
/// network and run on the server's blocking-work threads. The catalog's calls that open, check or
/// discard a store (an S3 request each on S3, which a stalled object store holds for its timeout)
/// run under that store's own lock, never under `state`'s mutex, which every event loop takes.
final class StoreDirectory: Sendable {
    private struct State {
        var open: [String: any ServedBackend] = [:]
        /// Stores created for a put that has not committed yet, with how many puts hold a claim on each.
        var unconfirmed: [String: Int] = [:]

        /// The open store `name` unless its first put is still in progress. Every request looks its
        /// store up here; the (nearly always) empty `unconfirmed` is not hashed into.
        func confirmedStore(_ name: String) -> (any ServedBackend)? {
            guard unconfirmed.isEmpty || unconfirmed[name] == nil else { return nil }
            return open[name]
        }
    }

    /// Where the stores live.
    let catalog: any ServedBackendCatalog
    /// The largest blob a put may store.
    let maximumBlobSize: Int64
    private let state = Locked(State())
    /// One lock per store name, held across the catalog's calls for that store, so that a store is
    /// never opened while it is being discarded; with how many callers hold or wait for it. An entry
    /// goes when its last user lets go, so names that clients only tried (refused puts to stores
    /// that never came to be) leave nothing behind.
    private let nameLocks = Locked<[String: (lock: NSLock, users: Int)]>([:])
    /// Called once for each store when it is first opened (the daemon forwards its changes to the event log).
    private let onOpen: @Sendable (any ServedBackend) -> Void
    /// The daemon's log, in its configured format.
    private let log: Log

    init(
        catalog: any ServedBackendCatalog, maximumBlobSize: Int64, log: Log,
        onOpen: @escaping @Sendable (any ServedBackend) -> Void = { _ in }
    ) {
        self.catalog = catalog
        self.maximumBlobSize = maximumBlobSize
        self.log = log
        self.onOpen = onOpen
    }

    /// The store `name` if it is open and confirmed, else `nil` (which says nothing about whether it
    /// exists). Never blocks: a lookup under the mutex.
    func openedStore(_ name: String) -> (any ServedBackend)? {
        state.withLock { $0.confirmedStore(name) }
    }

    /// The existing store `name`, or `nil` when it has never been written (reads never create
    /// stores), also while its first put is still in progress. May block (opens the store).
    func existing(_ name: String) throws -> (any ServedBackend)? {
        // A name among the open stores was validated when its store opened: every request looks its
        // store up here, so it is not validated again (`Benchmarks/scripts/instructions` shows the cost).
        if let known = openedStore(name) { return known }
        try StoreName.validate(name)
        guard try catalog.storeExists(name) else { return nil }
        return try withNameLock(name) { () throws -> (any ServedBackend)? in
            let (pending, known) = state.withLock { ($0.unconfirmed[name] != nil, $0.open[name]) }
            if pending { return nil }
            if let known { return known }
            // Checked again under the name's lock: a failed first put may have removed the store
            // since, and opening would create it.
            guard try catalog.storeExists(name) else { return nil }
            return try open(name, confirmed: true)
        }
    }

    /// The store a put writes to, creating it if needed; `claim` is non-nil when the store was
    /// created for a put that has not committed yet (this one or a concurrent one), and must be
    /// ended with the put's outcome. May block.
    func storeForPut(_ name: String) throws -> (store: any ServedBackend, claim: NewStoreClaim?) {
        if let known = openedStore(name) { return (known, nil) }
        try StoreName.validate(name)
        return try withNameLock(name) {
            let known = state.withLock { state -> (store: any ServedBackend, claimed: Bool)? in
                guard let existing = state.open[name] else { return nil }
                guard let holders = state.unconfirmed[name] else { return (existing, false) }
                state.unconfirmed[name] = holders + 1
                return (existing, true)
            }
            if let known { return (known.store, known.claimed ? NewStoreClaim(name: name, directory: self) : nil) }
            let existed = try catalog.storeExists(name)
            let store = try open(name, confirmed: existed)
            return (store, existed ? nil : NewStoreClaim(name: name, directory: self))
        }
    }

    /// A put holding a claim on `name` ended. The first commit confirms the store; when the last
    /// claim ends without any commit, the store is closed and discarded (it holds nothing: only
    /// puts add blobs, and no other process writes to a file store this daemon holds; an S3
    /// catalog, whose fleet may be writing, keeps it: ``S3StoreCatalog/discardStore(_:_:)``).
    fileprivate func endClaim(_ name: String, committed: Bool) {
        withNameLock(name) {
            let discarded = state.withLock { state -> (any ServedBackend)? in
                guard let holders = state.unconfirmed[name] else { return nil }  // already confirmed
                if committed || holders > 1 {
                    state.unconfirmed[name] = committed ? nil : holders - 1
                    return nil
                }
                state.unconfirmed[name] = nil
                return state.open.removeValue(forKey: name)
            }
            guard let discarded else { return }
            // Under the name's lock, so that no put or read opens the store while it goes.
            do { try catalog.discardStore(name, discarded) } catch {
                log(.error, "cannot remove the empty store '\(name)' left by a refused put: \(error)")
            }
        }
    }

    /// Opens the store `name` (under its name's lock) and makes it visible: to reads too when
    /// `confirmed`, else to puts only, with one claim held.
    private func open(_ name: String, confirmed: Bool) throws -> any ServedBackend {
        // Marked before the catalog creates the store: a listing that finds it meanwhile leaves it out.
        if !confirmed { state.withLock { $0.unconfirmed[name] = 1 } }
        let store: any ServedBackend
        do { store = try catalog.openStore(name) } catch {
            if !confirmed { state.withLock { _ = $0.unconfirmed.removeValue(forKey: name) } }
            throw error
        }
        // Before it is visible: nobody can use the store before its observers are attached.
        onOpen(store)
        state.withLock { $0.open[name] = store }
        return store
    }

    /// Runs `body` holding the lock of the store `name` (see ``nameLocks``).
    private func withNameLock<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        let lock = nameLocks.withLock { locks in
            let entry = locks[name].map { ($0.lock, $0.users + 1) } ?? (NSLock(), 1)
            locks[name] = entry
            return entry.0
        }
        lock.lock()
        defer {
            lock.unlock()
            nameLocks.withLock { locks in
                guard let entry = locks[name] else { return }
                locks[name] = entry.users > 1 ? (entry.lock, entry.users - 1) : nil
            }
        }
        return try body()
    }

    /// How many store names have a lock now (held or waited for); 0 when no catalog call is running.
    var nameLockCount: Int { nameLocks.withLock { $0.count } }

    /// The stores open now (committed to), by name.
    func openStores() -> [String: any ServedBackend] {
        state.withLock { state in state.open.filter { state.unconfirmed[$0.key] == nil } }
    }

    /// Names of every store, sorted byte-wise (stores whose first put is in progress are left out). May block.
    func storeNames() throws -> [String] {
        let names = try catalog.storeNames()
        let unconfirmed = state.withLock { $0.unconfirmed }
        return names.filter { unconfirmed[$0] == nil }
    }
}

/// A put's hold on a store that did not exist when the put began (see ``StoreDirectory``). Ended
/// once with the put's outcome; a claim released without being ended counts as a failed put, so
/// every way a request can end (refusal, malformed body, vanished client) lets go of it.
final class NewStoreClaim: Sendable {
    let name: String
    private let directory: StoreDirectory
    private let ended = Locked(false)

    fileprivate init(name: String, directory: StoreDirectory) {
        self.name = name
        self.directory = directory
    }

    /// Reports the put's outcome; later calls do nothing.
    func end(committed: Bool) {
        guard !ended.withLock({ let was = $0; $0 = true; return was }) else { return }
        directory.endClaim(name, committed: committed)
    }

    deinit { end(committed: false) }
}
