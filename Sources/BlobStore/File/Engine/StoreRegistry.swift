import Foundation
internal import BlobSystem

/// Hands out one `StoreCore` per store folder per process, so every `PersistentDataStore` on the
/// same folder shares one queue, one committer and one lock.
enum StoreRegistry {
    private final class WeakCore {
        weak var core: StoreCore?
        init(_ core: StoreCore) { self.core = core }
    }

    /// Owned here; every access holds the mutex (also while opening, so two opens cannot race).
    private static let cores = Locked<[String: WeakCore]>([:])

    /// The engine of the store, opened for writing. `policy` (when not `nil`) is stored with the store
    /// and applied, also to an engine already open; `clock` and `sharedMemoryTier` count only for the open that makes the engine.
    static func core(
        root: String, name: String, bucketCapacity: Int, lockWait: Duration = .zero, policy: StorePolicy? = nil, clock: StoreClock = .system,
        sharedMemoryTier: MemoryTierBudget? = nil
    ) throws -> StoreCore {
        let key = root + "/" + name
        return try cores.withLock { cores in
            if let existing = cores[key]?.core {
                if let policy, try existing.cache.policy() != policy { try existing.cache.setPolicy(policy) }
                return existing
            }
            let core = try StoreCore(
                root: root, name: name, bucketCapacity: bucketCapacity, lockWait: lockWait, policy: policy, clock: clock,
                sharedMemoryTier: sharedMemoryTier)
            cores[key] = WeakCore(core)
            return core
        }
    }

    /// A read-only engine for the store (see ``StoreCore/init(readingOnly:name:)``), kept apart from
    /// the engine that has the store open for writing: it reads only the files, just as it would
    /// from another process.
    static func readOnlyCore(root: String, name: String, clock: StoreClock = .system) throws -> StoreCore {
        let key = root + "/" + name
        return try cores.withLock { cores in
            if let existing = cores[key + "\u{0}read-only"]?.core { return existing }
            let core = try StoreCore(readingOnly: root, name: name, clock: clock)
            cores[key + "\u{0}read-only"] = WeakCore(core)
            return core
        }
    }
}

extension StoreRegistry {
    /// Stops handing out `core` for its folder, if it is still the one handed out: the next open
    /// of that folder makes a new engine, even while something still holds this one.
    static func forget(_ core: StoreCore, root: String, name: String) {
        cores.withLock { cores in
            let key = root + "/" + name
            if cores[key]?.core === core { cores[key] = nil }
        }
    }
}

extension PersistentDataStore {
    /// For a server that removes a store's folder it created for a put that failed: later opens of
    /// the folder get a new engine (which creates the folder afresh) instead of this store's, which
    /// a failed upload may still hold for a moment. Use this store no more afterwards.
    package func detachFromRegistry() {
        StoreRegistry.forget(core, root: rootURL.path, name: name)
    }
}
