import BlobStore
import BlobSystem
import Foundation

/// The file backend's stores: one folder each under the root, opened as ``PersistentDataStore``.
struct FileStoreCatalog: ServedBackendCatalog {
    /// The root folder.
    let root: URL
    /// How every store is opened.
    let configuration: StoreConfiguration

    init(root: URL, configuration: StoreConfiguration) {
        self.root = root.standardizedFileURL
        self.configuration = configuration
    }

    private func folder(_ name: String) -> String { root.path + "/" + name }

    /// Whether the store's folder exists. Only ENOENT means no store: a folder that cannot be
    /// reached (ELOOP, EACCES, ENOTCONN) is an error, never a 404.
    func storeExists(_ name: String) throws -> Bool {
        let path = folder(name)
        do {
            return try FileSystem.statusIfExists(path)?.kind == .directory
        } catch {
            throw BlobStoreError.io(operation: "stat", path: path, errno: error)
        }
    }

    func openStore(_ name: String) throws -> any ServedBackend {
        try PersistentDataStore(name: name, root: root, configuration: configuration)
    }

    func discardStore(_ name: String, _ backend: any ServedBackend) throws {
        // The failed upload may still hold the store's engine for a moment: a later put must get
        // a fresh one on a fresh folder, not that one.
        (backend as? PersistentDataStore)?.detachFromRegistry()
        try FileSystem.removeTree(folder(name))
    }

    /// The store folders under the root, without opening any: opening one takes its lock, which
    /// would shut other processes out of stores this daemon never served.
    func storeNames() throws -> [String] {
        let entries = try DirectoryStream.entries(of: root.path)
        return entries.filter { $0.kind == .directory && StoreName.violation(in: $0.name) == nil }
            .map(\.name).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    func otherHolders(of names: [String]) -> [String: String] {
        StoreLockHolders.holders(of: names, root: root.path)
    }
}

/// The memory backend's stores (`blobd --backend memory`): ``InMemoryBlobStore``s that live as long
/// as the daemon. The table is owned by its mutex.
final class MemoryStoreCatalog: ServedBackendCatalog {
    private let stores = Locked<[String: InMemoryBlobStore]>([:])

    init() {}

    func storeExists(_ name: String) throws -> Bool { stores.withLock { $0[name] != nil } }

    func openStore(_ name: String) throws -> any ServedBackend {
        let store = try InMemoryBlobStore(name: name)
        stores.withLock { $0[name] = store }
        return store
    }

    func discardStore(_ name: String, _ backend: any ServedBackend) throws {
        stores.withLock { $0[name] = nil }
    }

    func storeNames() throws -> [String] {
        stores.withLock { Array($0.keys) }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    func otherHolders(of names: [String]) -> [String: String] { [:] }
}
