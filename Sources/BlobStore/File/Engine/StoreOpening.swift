internal import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Opening a store folder (STORAGE.md, "Opening and recovery" and "Processes"): the root's format
/// marker, the folders, the writer's lock and the probe of its syncs, and the map to start from.
/// What a crash left for the index to finish is ``BucketIndex/recoverAtOpen()``'s.
enum StoreOpening {
    /// What opening for writing found.
    struct Writable {
        /// The lock held for as long as the engine lives.
        var lock: FileDescriptor
        /// See ``StoreCore/syncWarning``.
        var syncWarning: String?
        /// The manifest's map, or the initial one for a new store.
        var map: BucketMap
    }

    /// Creates what is missing (root, marker, store folders, bucket folders, syncing the parent of
    /// each folder it creates), takes the store's lock and reads the manifest. Closes the lock again
    /// if anything after it fails.
    static func openForWriting(root: String, paths: StorePaths, lockWait: Duration) throws -> Writable {
        try prepareRoot(root)
        var created: [String] = []
        for path in [paths.store, paths.buckets, paths.temp, paths.trash] {
            if try io("create folder", path, { try FileSystem.makeDirectory(path) }) { created.append(path) }
        }
        let lock = try StoreOpening.lock(paths.lock, root: root, wait: lockWait)
        let syncWarning = probeSyncs(folder: paths.store, file: lock, filePath: paths.lock)
        do {
            var map: BucketMap
            if let text = try? String(contentsOfFile: paths.manifest, encoding: .utf8) {
                switch BucketMap.parse(text) {
                case .success(let parsed): map = parsed
                case .failure(let error): throw BlobStoreError.corrupt(path: paths.manifest, reason: error.reason)
                }
            } else {
                map = .initial
            }
            for bucket in map.buckets {
                let path = paths.bucket(bucket.number)
                if try io("create folder", path, { try FileSystem.makeDirectory(path) }) { created.append(path) }
            }
            // A folder's entry is durable only once its parent is synced; a durable put later syncs
            // just its bucket folder.
            try DurableWrite.syncParents(of: created)
            return Writable(lock: lock, syncWarning: syncWarning, map: map)
        } catch {
            try? lock.close()
            throw error
        }
    }

    /// Checks the root's format and that the store's folder exists, and reads its manifest once no
    /// split is in progress (``Manifest/settled(at:)``). Creates nothing, takes no lock.
    static func openForReading(root: String, paths: StorePaths) throws -> (text: String, map: BucketMap) {
        try checkFormat(root)
        let status = try io("open store", paths.store) { try FileSystem.statusIfExists(paths.store) }
        guard let status, status.kind == .directory else {
            throw BlobStoreError.io(operation: "open store", path: paths.store, errno: status == nil ? .noSuchFileOrDirectory : .notDirectory)
        }
        return try Manifest.settled(at: paths.manifest)
    }

    /// Empties `tmp/` and `trash/`, which hold only what a crash left behind (a writer at open).
    static func sweepLeftovers(_ paths: StorePaths) throws {
        for folder in [paths.temp, paths.trash] {
            for entry in try io("list folder", folder, { try DirectoryStream.entries(of: folder) }) {
                let path = folder + "/" + entry.name
                try io("remove leftover", path) { try FileSystem.removeTree(path) }
            }
        }
    }

    /// Tries the two syncs durability rests on, a folder's `fsync` and a file's `fdatasync`, on the
    /// store folder and its lock file (open already). A file system that refuses
    /// them (`EINVAL`, `ENOTSUP`, `ENOSYS`) cannot keep a durable put's promise: every durable put,
    /// and every relaxed put that replaces a blob, will fail with that errno rather than be
    /// acknowledged. Said once here, so a server can log it at start-up.
    private static func probeSyncs(folder: String, file: FileDescriptor, filePath: String) -> String? {
        do {
            try io("sync folder", folder) { try FileSystem.syncDirectory(folder) }
            try io("sync", filePath) { try file.dataSync() }
            return nil
        } catch {
            let refused: Bool
            if case .io(_, _, let errno) = error as? BlobStoreError {
                refused = [EINVAL, ENOTSUP, EOPNOTSUPP, ENOSYS].contains(errno.rawValue)
            } else {
                refused = false
            }
            return refused
                ? "\(error) — this file system does not honour syncs: durable puts, and relaxed puts that replace a blob, will fail"
                : "\(error) — durable puts may fail"
        }
    }

    /// Whether `root` has its format marker; throws when the marker names another layout version.
    @discardableResult
    private static func checkFormat(_ root: String) throws -> Bool {
        let marker = root + "/" + StoreRoot.formatFileName
        guard let text = try? String(contentsOfFile: marker, encoding: .utf8) else { return false }
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        guard line == "blobstore \(StoreRoot.formatVersion)" else {
            throw BlobStoreError.unsupportedFormat(path: marker, found: line)
        }
        return true
    }

    private static func prepareRoot(_ root: String) throws {
        let created = try io("create root folder", root) { try FileSystem.makeDirectories(root) }
        try DurableWrite.syncParents(of: created)
        if try checkFormat(root) { return }
        let marker = root + "/" + StoreRoot.formatFileName
        // Several processes may open a new root at once: each writes its own temp file (a shared one
        // could be truncated by one while another renames it, leaving an empty marker for good).
        try DurableWrite.replace(marker, with: Array("blobstore \(StoreRoot.formatVersion)\n".utf8), temp: marker + "." + StorePaths.uniqueName("tmp-"))
    }

    /// Takes the store's lock, waiting up to `wait` for another process to release it, but not for
    /// blobd (the holder whose pid the root's `.blobd.lock` names): a daemon keeps its stores open.
    /// The lock file then says `pid N` for whoever holds it.
    private static func lock(_ path: String, root: String, wait: Duration) throws -> FileDescriptor {
        let fd = try io("open lock file", path) {
            try FileDescriptor.open(path, [.readWrite, .create], permissions: 0o644)
        }
        let acquired: Bool
        do {
            acquired = try fd.lockExclusive(waitingUpTo: wait) { lockHolder(fd, root: root).daemon }
        } catch {
            try? fd.close()
            throw BlobStoreError.io(operation: "lock", path: path, errno: error)
        }
        if !acquired {
            let holder = lockHolder(fd, root: root)
            try? fd.close()
            throw BlobStoreError.storeLocked(path: path, holder: holder.description)
        }
        let text = Array("pid \(getpid())\n".utf8)
        try? fd.resize(to: 0)
        try? text.withUnsafeBytes { try fd.writeAll(toAbsoluteOffset: 0, $0) }
        return fd
    }

    /// Who holds a store's lock, as its lock file says (`pid N`), and whether that is the blobd
    /// serving `root` (its `.blobd.lock` names the same pid).
    private static func lockHolder(_ fd: FileDescriptor, root: String) -> (description: String, daemon: Bool) {
        let holder = firstLine(fd)
        guard !holder.isEmpty else { return ("unknown process", false) }
        let daemonLock = try? FileDescriptor.open(root + "/.blobd.lock", [.readOnly])
        let daemon = daemonLock.map { lock in
            defer { try? lock.close() }
            return firstLine(lock) == holder
        } ?? false
        return (daemon ? "blobd, \(holder)" : holder, daemon)
    }

    /// The first line of a small file such as a lock file, without surrounding white space.
    private static func firstLine(_ fd: FileDescriptor) -> String {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = (try? buffer.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 0, into: $0) }) ?? 0
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        return (text.split(separator: "\n").first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
    }
}
