internal import BlobSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Fast path: relaxed puts write anonymous temp files (`O_TMPFILE`, linked under their blob's name
/// at the commit), which change one folder where a named temp file changes two and leave nothing
/// behind when the process dies (STORAGE.md, "Which kind of temp file").
///
/// Removable on its own: without this file and the one call in ``TempBlobWriter`` every put writes a
/// named temp file, which every filesystem supports.
///
/// Owned by the store's engine; its state is atomic (whether the filesystem allows such files, and
/// the ``AnonymousTempBudget``), shared by all of the store's writers on any thread.
final class AnonymousTempFiles: Sendable {
    /// The anonymous temp files open now, and how many may be.
    let budget = AnonymousTempBudget(limit: 256)
    private let folder: String
    /// Not known (0) until the first relaxed put needs a file, then probed once (1: they work, 2: they
    /// do not). Durable stores, and stores only read, never probe.
    private let state = Atomic<UInt8>(0)

    /// Anonymous files made in `folder` (the store's `tmp/`).
    init(folder: String) { self.folder = folder }

    /// A new anonymous file for the put whose temp name would be `path`, or `nil` when this store
    /// cannot make one now (unsupported, or the budget is spent): the put then writes a named file.
    func create(path: String) throws -> TempFile? {
        guard work(), budget.reserve() else { return nil }
        do throws(Errno) {
            return try TempFile.anonymous(in: folder, path: path, budget: budget)
        } catch where error.rawValue == EOPNOTSUPP || error.rawValue == EISDIR {
            budget.release()
            refuse()  // named files from now on
            return nil
        } catch {
            budget.release()
            throw BlobStoreError.io(operation: "create temp file", path: TempFile.location(path: path, anonymous: true), errno: error)
        }
    }

    /// Whether relaxed puts may write anonymous temp files here. The first call probes the temp folder
    /// (concurrent first calls may each probe; they agree); after a refusal, always `false`.
    func work() -> Bool {
        switch state.load(ordering: .relaxed) {
        case 1: return true
        case 2: return false
        default:
            let works = AnonymousTempFiles.probe(in: folder)
            _ = state.compareExchange(expected: 0, desired: works ? 1 : 2, ordering: .relaxed)
            return state.load(ordering: .relaxed) == 1
        }
    }

    /// Relaxed puts write named temp files from now on (a create was refused; tests).
    func refuse() { state.store(2, ordering: .relaxed) }

    /// Whether ``work()`` has decided yet.
    var probed: Bool { state.load(ordering: .relaxed) != 0 }

    /// Whether a file created with no name in `folder` can be linked under a name there (needs
    /// `O_TMPFILE` support and a mounted `/proc`). Leaves nothing behind; a crash in between leaves an
    /// empty probe file that the next open's sweep of the temp folder removes.
    private static func probe(in folder: String) -> Bool {
        guard let descriptor = try? FileDescriptor.openAnonymous(inDirectory: folder) else { return false }
        defer { try? descriptor.close() }
        let probe = folder + "/" + StorePaths.uniqueName("probe-")
        guard (try? FileSystem.link(descriptor, as: probe)) != nil else { return false }
        _ = try? FileSystem.unlinkIfExists(probe)
        return true
    }
}

/// How many anonymous temp files a store holds open, with a limit: every put waiting for its commit
/// holds one descriptor, and callers may start any number of puts at once. Past the limit, puts write
/// named files instead (closed while they wait). Lock-free; shared by all of a store's writers.
final class AnonymousTempBudget: Sendable {
    /// The most open at once.
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// How many are open now.
    var count: Int { open.load(ordering: .relaxed) }

    /// Takes one if any is left.
    func reserve() -> Bool {
        if open.wrappingAdd(1, ordering: .relaxed).newValue <= limit { return true }
        open.wrappingSubtract(1, ordering: .relaxed)
        return false
    }

    /// Gives one back.
    func release() { open.wrappingSubtract(1, ordering: .relaxed) }
}
