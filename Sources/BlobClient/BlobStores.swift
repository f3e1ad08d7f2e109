import BlobStore
import Foundation

/// Opens a store on this machine whether or not `blobd` is running on its root, so that code using
/// it never has to know.
///
/// ```swift
/// let store = try BlobStores.open("photos")   // instead of PersistentDataStore(name: "photos")
/// ```
///
/// One process at a time has a store open, and blobd keeps open every store it has been asked for.
/// ``open(_:root:configuration:clientConfiguration:)`` therefore opens the store in this process
/// when it can, and otherwise reaches it through the blobd that has it open, with the same
/// ``BlobStore/BlobStoring`` API, errors and article API (``BlobStore/ArticleDataStoring``).
public enum BlobStores {
    /// The store `name` under `root`:
    /// - a ``BlobStore/PersistentDataStore`` in this process when no other process has the store
    ///   open (its lock is free, or is let go within `configuration.lockWait`);
    /// - a ``RemoteBlobStore`` on the socket of the `blobd` serving `root` when that blobd has the
    ///   store open (the store's lock and the root's `.blobd.lock` name the same pid, and the latter
    ///   names the socket the daemon listens on: docs/CLIENT.md, "Opening a store on this machine").
    ///   `clientConfiguration` is that client's.
    ///
    /// Throws ``BlobStore/BlobStoreError/storeLocked(path:holder:)`` when another process (not that
    /// blobd) has the store open, naming it; and what opening the store throws otherwise
    /// (`invalidStoreName`, `io`, `unsupportedFormat`, `corrupt`). Blocking (it opens files): call
    /// it where a ``BlobStore/PersistentDataStore`` would be made.
    public static func open(
        _ name: String, root: URL = StoreRoot.defaultURL, configuration: StoreConfiguration = StoreConfiguration(),
        clientConfiguration: BlobClient.Configuration = .init()
    ) throws -> any ArticleDataStoring {
        do {
            return try PersistentDataStore(name: name, root: root, configuration: configuration)
        } catch BlobStoreError.storeLocked(let path, let holder) {
            // The store's holder is named `blobd, pid N` when its pid is the one in the root's
            // `.blobd.lock`; read that file again for the socket, and check that it still names the
            // same daemon (one that restarted in between has not opened this store yet).
            guard let daemon = DaemonRecord.read(root: root.standardizedFileURL.path), holder == "blobd, " + daemon.pid,
                let socket = daemon.socket
            else { throw BlobStoreError.storeLocked(path: path, holder: holder) }
            return try BlobClient(socketPath: socket, configuration: clientConfiguration).store(name)
        }
    }
}
