import Foundation
import BlobSystem

/// Hands out one `StoreCore` per store folder per process, so every `PersistentDataStore` on the
/// same folder shares one queue, one committer and one lock.
enum StoreRegistry {
    private final class WeakCore {
        weak var core: StoreCore?
        init(_ core: StoreCore) { self.core = core }
    }

    /// Owned here; every access holds the mutex (also while opening, so two opens cannot race).
    private static let cores = Locked<[String: WeakCore]>([:])

    static func core(root: String, name: String, bucketCapacity: Int) throws -> StoreCore {
        let key = root + "/" + name
        return try cores.withLock { cores in
            if let existing = cores[key]?.core { return existing }
            let core = try StoreCore(root: root, name: name, bucketCapacity: bucketCapacity)
            cores[key] = WeakCore(core)
            return core
        }
    }
}
