import BlobStore
import BlobSystem
import S3BlobStore

/// The S3 catalog as a fleet member serves it: every call goes to the wrapped catalog, and the
/// stores it opens are remembered, so a bucket event for one of them can be handed to it. Events
/// for stores this daemon has not opened are dropped: nobody here subscribes to them, and a store
/// opened later starts from what is in the bucket then.
///
/// Owns `opened` behind its mutex; any thread may call.
final class FleetCatalog: ServedBackendCatalog {
    /// The catalog it serves.
    let wrapped: any ServedBackendCatalog
    private let opened = Locked<[String: any S3RemoteChangeReceiving]>([:])

    init(_ wrapped: any ServedBackendCatalog) {
        self.wrapped = wrapped
    }

    /// Where the changes of store `name` go, if this daemon has opened it.
    func receiver(of name: String) -> (any S3RemoteChangeReceiving)? {
        opened.withLock { $0[name] }
    }

    /// The store's own receiver: the store itself, or the S3 store behind a read cache (whose
    /// observers mark the cached entry stale).
    static func remoteChangeReceiver(of store: any ServedBackend) -> (any S3RemoteChangeReceiving)? {
        if let receiving = store as? any S3RemoteChangeReceiving { return receiving }
        if let cached = store as? S3CachedStore { return cached.backend as? any S3RemoteChangeReceiving }
        return nil
    }

    func storeExists(_ name: String) throws -> Bool { try wrapped.storeExists(name) }

    func openStore(_ name: String) throws -> any ServedBackend {
        let store = try wrapped.openStore(name)
        if let receiving = Self.remoteChangeReceiver(of: store) {
            opened.withLock { $0[name] = receiving }
        }
        return store
    }

    func discardStore(_ name: String, _ backend: any ServedBackend) throws {
        opened.withLock { _ = $0.removeValue(forKey: name) }
        try wrapped.discardStore(name, backend)
    }

    func storeNames() throws -> [String] { try wrapped.storeNames() }

    func otherHolders(of names: [String]) -> [String: String] { wrapped.otherHolders(of: names) }

    var commitsWaitForAnotherService: Bool { wrapped.commitsWaitForAnotherService }
}
