import BlobStore
import BlobSystem
import S3BlobStore

/// The S3 catalog as a fleet member serves it: every call goes to the wrapped catalog, and the
/// stores it opens are remembered, so a bucket event for one of them can be handed to it. A bucket
/// event for an existing store this daemon has not opened yet opens it, through the daemon (as a
/// request naming the store does), so that a subscriber to all stores sees the changes other
/// members make to stores this one has never served.
///
/// Owns `opened` and `openThroughDaemon` behind their mutexes; any thread may call.
final class FleetCatalog: ServedBackendCatalog {
    /// The catalog it serves.
    let wrapped: any ServedBackendCatalog
    private let opened = Locked<[String: any S3RemoteChangeReceiving]>([:])
    /// Opens a store the way a request does (observers attached before anyone can use it); set by
    /// the server once it has its stores. Until then an event for a store not open is dropped:
    /// nobody can be subscribed yet.
    private let openThroughDaemon = Locked<(@Sendable (String) -> Void)?>(nil)

    init(_ wrapped: any ServedBackendCatalog) {
        self.wrapped = wrapped
    }

    /// Where the changes of store `name` go, if this daemon has opened it.
    func receiver(of name: String) -> (any S3RemoteChangeReceiving)? {
        opened.withLock { $0[name] }
    }

    /// Where the changes of store `name` go, opening the store first if this daemon has not yet
    /// (`nil` when it does not exist, or the server is not serving yet). May block: opening asks the
    /// object store whether the store exists.
    func receiverOpening(_ name: String) -> (any S3RemoteChangeReceiving)? {
        if let known = receiver(of: name) { return known }
        guard let open = openThroughDaemon.withLock({ $0 }) else { return nil }
        open(name)
        return receiver(of: name)
    }

    /// Has ``receiverOpening(_:)`` open stores with `open` (the server's store directory).
    func openStores(through open: @escaping @Sendable (String) -> Void) {
        openThroughDaemon.withLock { $0 = open }
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
