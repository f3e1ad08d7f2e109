import BlobStore
import BlobSystem
import Foundation

/// The root folder's stores, opened once each and kept open for the daemon's life (a
/// `PersistentDataStore` is cheap to keep and holds the store's lock and caches).
///
/// A store is created by its first put that commits: a put to a store that does not exist creates
/// its folder (the upload needs the store's temp folder) and holds a ``NewStoreClaim``; when every
/// put holding a claim on that store has failed and none committed, the folder is removed again, so
/// a refused PUT leaves no store behind. Until a put commits, reads treat the store as absent.
///
/// Owns `state` behind its mutex; every method may be called from any thread.
final class StoreDirectory: Sendable {
    private struct State {
        var open: [String: PersistentDataStore] = [:]
        /// Stores created for a put that has not committed yet, with how many puts hold a claim on each.
        var unconfirmed: [String: Int] = [:]

        /// The open store `name` unless its first put is still in progress. Every request looks its
        /// store up here; the (nearly always) empty `unconfirmed` is not hashed into.
        func confirmedStore(_ name: String) -> PersistentDataStore? {
            guard unconfirmed.isEmpty || unconfirmed[name] == nil else { return nil }
            return open[name]
        }
    }

    /// The root folder.
    let root: URL
    /// How every store is opened.
    let configuration: StoreConfiguration
    private let state = Locked(State())
    /// Called once for each store when it is first opened (the daemon forwards its changes to the event log).
    private let onOpen: @Sendable (PersistentDataStore) -> Void

    init(root: URL, configuration: StoreConfiguration, onOpen: @escaping @Sendable (PersistentDataStore) -> Void = { _ in }) {
        self.root = root.standardizedFileURL
        self.configuration = configuration
        self.onOpen = onOpen
    }

    private func folder(_ name: String) -> String { root.path + "/" + name }

    /// Whether the store's folder exists. Only ENOENT means no store: a folder that cannot be
    /// reached (ELOOP, EACCES, ENOTCONN) is an error, never a 404.
    private func folderExists(_ name: String) throws -> Bool {
        let path = folder(name)
        do {
            return try FileSystem.statusIfExists(path)?.kind == .directory
        } catch {
            throw BlobStoreError.io(operation: "stat", path: path, errno: error)
        }
    }

    /// The existing store `name`, or `nil` when it has never been written (reads never create
    /// stores), also while its first put is still in progress.
    func existing(_ name: String) throws -> PersistentDataStore? {
        // A name among the open stores was validated when its store opened: every request looks its
        // store up here, and validating first cost a fiftieth of a GET's instructions.
        if let known = state.withLock({ $0.confirmedStore(name) }) { return known }
        try StoreName.validate(name)
        guard try folderExists(name) else { return nil }
        return try state.withLock { state -> PersistentDataStore? in
            if state.unconfirmed[name] != nil { return nil }
            if let existing = state.open[name] { return existing }
            // Checked again under the lock: a failed first put may have removed the folder since,
            // and opening would create it.
            guard try folderExists(name) else { return nil }
            return try open(name, in: &state)
        }
    }

    /// The store a put writes to, creating it if needed; `claim` is non-nil when the store was
    /// created for a put that has not committed yet (this one or a concurrent one), and must be
    /// ended with the put's outcome.
    func storeForPut(_ name: String) throws -> (store: PersistentDataStore, claim: NewStoreClaim?) {
        if let known = state.withLock({ $0.confirmedStore(name) }) { return (known, nil) }
        try StoreName.validate(name)
        return try state.withLock { state in
            if let existing = state.open[name] {
                guard let holders = state.unconfirmed[name] else { return (existing, nil) }
                state.unconfirmed[name] = holders + 1
                return (existing, NewStoreClaim(name: name, directory: self))
            }
            let existed = try folderExists(name)
            let store = try open(name, in: &state)
            if existed { return (store, nil) }
            state.unconfirmed[name] = 1
            return (store, NewStoreClaim(name: name, directory: self))
        }
    }

    /// A put holding a claim on `name` ended. The first commit confirms the store; when the last
    /// claim ends without any commit, the store is closed and its folder removed (it holds nothing:
    /// only puts add blobs, and another process cannot write while this daemon holds the store's lock).
    fileprivate func endClaim(_ name: String, committed: Bool) {
        state.withLock { state in
            guard let holders = state.unconfirmed[name] else { return }  // already confirmed
            if committed || holders > 1 {
                state.unconfirmed[name] = committed ? nil : holders - 1
                return
            }
            state.unconfirmed[name] = nil
            guard let store = state.open.removeValue(forKey: name) else { return }
            // The failed upload may still hold the store's engine for a moment: a later put must get
            // a fresh one on a fresh folder, not that one.
            store.detachFromRegistry()
            // Under the lock, so that no put or read opens the store while its folder goes.
            do { try FileSystem.removeTree(folder(name)) } catch {
                Log.write("blobd: cannot remove the empty store folder \(folder(name)) left by a refused put: \(error)")
            }
        }
    }

    private func open(_ name: String, in state: inout State) throws -> PersistentDataStore {
        let store = try PersistentDataStore(name: name, root: root, configuration: configuration)
        // Inside the lock: nobody can use the store before its observers are attached.
        onOpen(store)
        state.open[name] = store
        return store
    }

    /// The stores open now (committed to), by name.
    func openStores() -> [String: PersistentDataStore] {
        state.withLock { state in state.open.filter { state.unconfirmed[$0.key] == nil } }
    }

    /// Names of the store folders under the root, sorted byte-wise (stores whose first put is in
    /// progress are left out).
    func storeNames() throws -> [String] {
        let entries = try DirectoryStream.entries(of: root.path)
        let unconfirmed = state.withLock { $0.unconfirmed }
        return entries.filter { $0.kind == .directory && StoreName.violation(in: $0.name) == nil && unconfirmed[$0.name] == nil }
            .map(\.name).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
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
