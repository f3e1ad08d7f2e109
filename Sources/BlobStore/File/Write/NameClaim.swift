internal import BlobSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Fast path: a relaxed put that may create its blob first tries to publish its temp file under the
/// blob's name with a call that fails if the name exists (a link for an anonymous file,
/// `renameat2(RENAME_NOREPLACE)` for a named one), instead of looking the name up first. Most puts
/// name a new blob, and a lookup of an absent name in a large bucket folder costs about as much as
/// the rename; only a name that exists costs a lookup (STORAGE.md, "Writing").
///
/// Removable on its own: without this file and the two uses in ``ChangeApplier`` (its
/// `claimsNameFirst` and the claim at the top of its `applyPut`), every put looks its blob up first.
///
/// Owned by the store's engine; its one flag is atomic.
final class NameClaim: Sendable {
    /// Cleared for good when this filesystem refuses `renameat2(RENAME_NOREPLACE)`, so relaxed puts of
    /// named temp files look their blob up first instead.
    let noReplaceRenames = AtomicFlag(true)

    /// Whether `put` claims its name first: a relaxed put that may create its blob. A durable put looks
    /// up first, because its header's `created` must be final before its content is synced; a put with
    /// an `ifMatch` condition needs the current version.
    func applies(to put: PreparedPut) -> Bool {
        guard !put.durable, put.temp.isAnonymous || noReplaceRenames.load(ordering: .relaxed) else { return false }
        switch put.condition {
        case .none, .ifNoneMatch: return true
        case .ifMatch: return false
        }
    }

    /// Publishes `put`'s temp file as `path` if nothing is there: `true` when it did, `false` when the
    /// name exists (or this filesystem cannot refuse to replace), so the caller looks the blob up. In a barrier.
    func claim(_ put: PreparedPut, as path: String) throws -> Bool {
        do throws(Errno) {
            try put.temp.publishNew(as: path)
            return true
        } catch where error.rawValue == EEXIST {
            return false  // the name exists: looked up as any replacement is
        } catch where !put.temp.isAnonymous && (error.rawValue == EINVAL || error.rawValue == ENOSYS) {
            noReplaceRenames.store(false, ordering: .relaxed)  // this filesystem cannot; look up first from now on
            return false
        } catch {
            throw BlobStoreError.io(operation: put.temp.isAnonymous ? "link" : "rename", path: path, errno: error)
        }
    }
}
