import BlobStore
import BlobSystem
import Foundation

/// The root folder's stores, opened once each and kept open for the daemon's life (a
/// `PersistentDataStore` is cheap to keep and holds the store's lock and caches).
final class StoreDirectory: Sendable {
    /// The root folder.
    let root: URL
    /// How every store is opened.
    let configuration: StoreConfiguration
    private let open = Locked<[String: PersistentDataStore]>([:])
    /// Called once for each store when it is first opened (the daemon forwards its changes to the event log).
    private let onOpen: @Sendable (PersistentDataStore) -> Void

    init(root: URL, configuration: StoreConfiguration, onOpen: @escaping @Sendable (PersistentDataStore) -> Void = { _ in }) {
        self.root = root.standardizedFileURL
        self.configuration = configuration
        self.onOpen = onOpen
    }

    /// The store `name`; when `create` is false and no such folder exists, `nil` (so that reads
    /// never create stores: a store is created by its first put).
    func store(_ name: String, create: Bool) throws -> PersistentDataStore? {
        // A name among the open stores was validated when its store opened: every request looks its
        // store up here, and validating first cost a fiftieth of a GET's instructions.
        if let existing = open.withLock({ $0[name] }) { return existing }
        try StoreName.validate(name)
        if !create {
            // Only ENOENT means no store: a folder that cannot be reached (ELOOP, EACCES, ENOTCONN) is an error.
            let path = root.path + "/" + name
            let status: FileStatus?
            do { status = try FileSystem.statusIfExists(path) } catch { throw BlobStoreError.io(operation: "stat", path: path, errno: error) }
            guard let status, status.kind == .directory else { return nil }
        }
        return try open.withLock { open in
            if let existing = open[name] { return existing }
            let store = try PersistentDataStore(name: name, root: root, configuration: configuration)
            // Inside the lock: nobody can use the store before its observers are attached.
            onOpen(store)
            open[name] = store
            return store
        }
    }

    /// Names of the store folders under the root, sorted byte-wise.
    func storeNames() throws -> [String] {
        let entries = try DirectoryStream.entries(of: root.path)
        return entries.filter { $0.kind == .directory && StoreName.violation(in: $0.name) == nil }
            .map(\.name).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }
}
