internal import BlobSystem
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The machinery behind one store folder, shared by every ``PersistentDataStore`` opened on it in this process.
///
/// Concurrency design (who owns what):
/// - `queue` is a concurrent queue. Reads (get, head, list) run as ordinary work items and so run
///   side by side; every change is committed inside a `.barrier` item, so no read on it overlaps a
///   commit. A get or head that can be served from the kernel's caches alone skips the queue and runs
///   on the caller's thread (``openIfCached(_:readLength:)`` says why that is still consistent).
/// - `confined` (the bucket map and per-bucket counts) is owned by `queue`: read only inside its work
///   items, mutated only inside its barrier items. That discipline is its lock.
/// - `commitQueue` is serial: it drains queued mutations in batches (group commit), runs each batch in
///   one barrier, syncs a batch's content before that barrier and its folders after it — under load
///   one round of syncs serves both the previous batch's folders and the next batch's content. The
///   syncs of a round run side by side on `syncRound`'s threads (``SyncRound``).
/// - `publishedMap` is a copy of the bucket map under its own mutex, for reads served without
///   `queue` when everything they need is in the kernel's caches (``openIfCached(_:readLength:)``).
/// - `listingCache` (the last listed bucket's sorted entries) holds its own mutex; it is valid only
///   for the bucket version it was read at (`Confined.version(ofBucket:)`).
/// - Content is written to temp files on `ioQueues` (the one matching the calling task's priority),
///   outside the barrier; only renames happen inside it.
/// - `reclaimQueue` unlinks replaced and removed versions later, because freeing blocks on this kind of
///   disk issues a synchronous TRIM that must not delay acknowledgements or hold the barrier.
/// - `statistics`, `pending` and the broadcaster hold their own mutexes.
/// No blocking call runs on the Swift concurrency pool: async methods hop to these queues with continuations.
final class StoreCore: @unchecked Sendable {
    let name: String
    let storePath: String
    let bucketsPath: String
    let tempPath: String
    let trashPath: String
    let manifestPath: String
    let bucketCapacity: Int

    let queue: DispatchQueue
    let commitQueue: DispatchQueue
    let ioQueues: IOQueues
    let reclaimQueue: DispatchQueue
    let broadcaster: ChangeBroadcaster
    let syncRound: SyncRound
    /// Set when opening found that the store's file system refuses `fsync` or `fdatasync` (or failed
    /// one): says what that means for puts. `nil` when both worked.
    let syncWarning: String?

    /// State owned by `queue` (see the type's documentation).
    final class Confined {
        var map: BucketMap {
            didSet { published.withLock { $0 = map } }
        }
        /// Where ``map`` is copied for reads that skip `queue` (``StoreCore/publishedMap``).
        private let published: Locked<BucketMap>
        /// Blob count per bucket number, learned lazily the first time a commit needs it.
        var counts: [Int: Int] = [:]
        /// Raised whenever a bucket gains a blob (a new put, a split) or loses one (a remove); see
        /// ``version(ofBucket:)``. A remove-all needs no entry: a listing skips entries whose file is
        /// gone, and every later put or split raises the version of the bucket it fills.
        private var versions: [Int: UInt64] = [:]
        private var lastVersion: UInt64 = 0

        init(map: BucketMap, published: Locked<BucketMap>) {
            self.map = map
            self.published = published
            published.withLock { $0 = map }
        }

        /// A value that differs after any change that adds a blob to bucket `number` or removes one from it.
        func version(ofBucket number: Int) -> UInt64 { versions[number] ?? 0 }

        /// Bucket `number` gained or lost a blob.
        func bucketChanged(_ number: Int) {
            lastVersion += 1
            versions[number] = lastVersion
        }
    }
    let confined: Confined
    /// A copy of `confined.map` for reads that skip `queue` (``openIfCached(_:readLength:)``),
    /// replaced inside the barrier whenever the map changes. Its own mutex guards it.
    let publishedMap = Locked(BucketMap.initial)
    /// Cleared for good when this kernel, filesystem or file owner refuses cache-only reads
    /// (``openIfCached(_:readLength:)``), so reads stop trying them.
    let cachedReadsWork = Atomic<Bool>(true)
    /// Cleared for good when this filesystem refuses `renameat2(RENAME_NOREPLACE)`, so relaxed puts
    /// look their blob up before the barrier instead of claiming its name first (``claimsNameFirst(_:)``).
    let noReplaceRenames = Atomic<Bool>(true)
    /// Whether relaxed puts write anonymous temp files (``TempFile``): not known (0) until the first
    /// relaxed put needs a file, then probed once (1: they work, 2: they do not); see
    /// ``anonymousTempFilesWork()``. Durable stores, and stores only read, never probe.
    private let anonymousTempState = Atomic<UInt8>(0)
    /// The anonymous temp files open now, and how many may be (see ``AnonymousTempBudget``).
    let anonymousTemps = AnonymousTempBudget(limit: 256)
    /// How many times a commit read the stored version of a blob it changes (observability and tests).
    let commitLookups = Atomic<Int>(0)
    /// How many reads went through `queue` rather than being served from the caches (observability and tests).
    let queuedReads = Atomic<Int>(0)

    /// The sorted entries of the bucket a listing read last, kept for the listing's next page while
    /// that bucket is unchanged (see ``sortedEntries(ofBucket:)``).
    let listingCache = Locked<BucketListing?>(nil)
    /// How many times a bucket folder was read and sorted for a listing (observability and tests).
    let bucketListings = Locked(0)

    /// `nil` until first computed; afterwards kept current by every commit.
    let statistics = Locked<StoreStatistics?>(nil)
    let pending = Locked(PendingMutations())
    /// How many group commits have run (observability and tests).
    let commitBatches = Locked(0)
    /// How many times commits waited for the disk: rounds of `fdatasync`s and folder `fsync`s made side
    /// by side (``SyncRound``), one per round however many files it syncs (observability and tests).
    let commitSyncs = Locked(0)
    /// Tests only: called on the commit thread after the barrier of a durable batch, before its folder sync.
    let afterDurableBarrier = Locked<(@Sendable () -> Void)?>(nil)
    /// Tests only: while not nil, commits append what they do, in order, so a test can check the
    /// durability protocol (content synced before its rename, folder synced before the acknowledgement).
    let commitLog = Locked<[CommitEvent]?>(nil)
    /// The order of the article calls made through any ``PersistentDataStore`` on this folder.
    let articleCallOrder = ArticleCallOrder()
    /// `nil` for a read-only engine, which takes no lock.
    private let lockDescriptor: FileDescriptor?
    /// Whether this engine only reads a store that another process may be changing (see
    /// ``init(readingOnly:name:)`` and "Processes" in STORAGE.md).
    let readOnly: Bool
    /// Read-only engines: the text of the manifest `confined.map` was read from, replaced together
    /// with the map (inside a barrier), so a read can tell whether the map moved on since.
    let manifestSeen = Locked("")

    /// Opens (creating if needed) the store `name` under `root`: takes its lock, finishes an interrupted
    /// split, and clears temp files and unreclaimed versions a crash left behind. Does not scan blobs.
    init(root: String, name: String, bucketCapacity: Int, lockWait: Duration = .zero) throws {
        try StoreName.validate(name)
        readOnly = false
        self.name = name
        self.bucketCapacity = bucketCapacity
        storePath = root + "/" + name
        bucketsPath = storePath + "/b"
        tempPath = storePath + "/tmp"
        trashPath = storePath + "/trash"
        manifestPath = storePath + "/manifest"
        let label = "blobstore.\(name)"
        // `.default`, the quality of service of `.medium` tasks (the usual callers): see `IOQueues`.
        queue = DispatchQueue(label: label, qos: .default, attributes: .concurrent)
        commitQueue = DispatchQueue(label: label + ".commit", qos: .default)
        ioQueues = IOQueues(label: label + ".io")
        reclaimQueue = DispatchQueue(label: label + ".reclaim", qos: .utility)
        broadcaster = ChangeBroadcaster(store: name)
        syncRound = SyncRound(label: label)

        try StoreCore.prepareRoot(root)
        var created: [String] = []
        for path in [storePath, bucketsPath, tempPath, trashPath] {
            if try io("create folder", path, { try FileSystem.makeDirectory(path) }) { created.append(path) }
        }
        let lock = try StoreCore.lock(storePath + "/.lock", root: root, wait: lockWait)
        lockDescriptor = lock
        syncWarning = StoreCore.probeSyncs(folder: storePath, file: lock, filePath: storePath + "/.lock")
        do {
            var map: BucketMap
            if let text = try? String(contentsOfFile: manifestPath, encoding: .utf8) {
                switch BucketMap.parse(text) {
                case .success(let parsed): map = parsed
                case .failure(let error): throw BlobStoreError.corrupt(path: manifestPath, reason: error.reason)
                }
            } else {
                map = .initial
            }
            for bucket in map.buckets {
                let path = bucketsPath + "/\(bucket.number)"
                if try io("create folder", path, { try FileSystem.makeDirectory(path) }) { created.append(path) }
            }
            // A folder's entry is durable only once its parent is synced; a durable put later syncs
            // just its bucket folder.
            try StoreCore.syncParents(of: created)
            confined = Confined(map: map, published: publishedMap)
            if map.pendingSplit != nil { try finishSplit() }
            // A power cut after a split created its folder but before the manifest named it leaves
            // that folder behind, empty (nothing moves before the manifest records the split): removed.
            let known = Set(confined.map.buckets.map { String($0.number) })
            for entry in try io("list folder", bucketsPath, { try DirectoryStream.entries(of: bucketsPath) }) where !known.contains(entry.name) {
                _ = try? FileSystem.removeDirectory(bucketsPath + "/" + entry.name)
            }
            if !FileManager.default.fileExists(atPath: manifestPath) { try writeManifest(map) }
            for folder in [tempPath, trashPath] {
                for entry in try io("list folder", folder, { try DirectoryStream.entries(of: folder) }) {
                    let path = folder + "/" + entry.name
                    try io("remove leftover", path) { try FileSystem.removeTree(path) }
                }
            }
        } catch {
            try? lock.close()
            throw error
        }
    }

    /// Syncs the parent folder of each of `folders` (each once), making their entries durable.
    static func syncParents(of folders: [String]) throws {
        var parents: [String] = []
        for folder in folders where !parents.contains(parent(of: folder)) { parents.append(parent(of: folder)) }
        for parent in parents { try io("sync folder", parent) { try FileSystem.syncDirectory(parent) } }
    }

    /// The folder that holds `path` (`/` for a top-level one).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
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

    /// Opens the existing store `name` under `root` for reading only, without its lock, so another
    /// process may hold it and change the store meanwhile: creates, finishes and removes nothing, and
    /// commits nothing (see "Processes" in STORAGE.md for what such a reader may observe).
    init(readingOnly root: String, name: String) throws {
        try StoreName.validate(name)
        readOnly = true
        self.name = name
        bucketCapacity = Int.max
        storePath = root + "/" + name
        bucketsPath = storePath + "/b"
        tempPath = storePath + "/tmp"
        trashPath = storePath + "/trash"
        manifestPath = storePath + "/manifest"
        let label = "blobstore.\(name).read-only"
        queue = DispatchQueue(label: label, qos: .default, attributes: .concurrent)
        commitQueue = DispatchQueue(label: label + ".commit", qos: .default)
        ioQueues = IOQueues(label: label + ".io")
        reclaimQueue = DispatchQueue(label: label + ".reclaim", qos: .utility)
        broadcaster = ChangeBroadcaster(store: name)
        syncRound = SyncRound(label: label)
        lockDescriptor = nil
        syncWarning = nil
        try StoreCore.checkFormat(root)
        let folder = root + "/" + name
        let status = try io("open store", folder) { try FileSystem.statusIfExists(folder) }
        guard let status, status.kind == .directory else {
            throw BlobStoreError.io(operation: "open store", path: folder, errno: status == nil ? .noSuchFileOrDirectory : .notDirectory)
        }
        let (text, map) = try StoreCore.settledManifest(at: folder + "/manifest")
        confined = Confined(map: map, published: publishedMap)
        manifestSeen.withLock { $0 = text }
    }

    deinit { try? lockDescriptor?.close() }

    /// Whether relaxed puts may write anonymous temp files here. The first call probes the temp folder
    /// (concurrent first calls may each probe; they agree); after a refusal, always `false`.
    func anonymousTempFilesWork() -> Bool {
        switch anonymousTempState.load(ordering: .relaxed) {
        case 1: return true
        case 2: return false
        default:
            let works = StoreCore.anonymousFilesWork(in: tempPath)
            _ = anonymousTempState.compareExchange(expected: 0, desired: works ? 1 : 2, ordering: .relaxed)
            return anonymousTempState.load(ordering: .relaxed) == 1
        }
    }

    /// Relaxed puts write named temp files from now on (a create was refused; tests).
    func refuseAnonymousTempFiles() { anonymousTempState.store(2, ordering: .relaxed) }

    /// Whether ``anonymousTempFilesWork()`` has decided yet (tests).
    var anonymousTempFilesProbed: Bool { anonymousTempState.load(ordering: .relaxed) != 0 }

    /// Whether a file created with no name in `folder` can be linked under a name there (needs
    /// `O_TMPFILE` support and a mounted `/proc`). Leaves nothing behind; a crash in between leaves an
    /// empty probe file that the next open's sweep of the temp folder removes.
    private static func anonymousFilesWork(in folder: String) -> Bool {
        guard let descriptor = try? FileDescriptor.openAnonymous(inDirectory: folder) else { return false }
        defer { try? descriptor.close() }
        let probe = folder + "/" + uniqueName("probe-")
        guard (try? FileSystem.link(descriptor, as: probe)) != nil else { return false }
        _ = try? FileSystem.unlinkIfExists(probe)
        return true
    }

    // MARK: - Root and lock

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
        try syncParents(of: created)
        if try checkFormat(root) { return }
        let marker = root + "/" + StoreRoot.formatFileName
        // Several processes may open a new root at once: each writes its own temp file (a shared one
        // could be truncated by one while another renames it, leaving an empty marker for good).
        try writeDurably(Array("blobstore \(StoreRoot.formatVersion)\n".utf8), to: marker, temp: marker + "." + uniqueName("tmp-"))
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

    /// Writes `bytes` to `path` atomically and durably: temp file, fsync, rename, fsync folder.
    static func writeDurably(_ bytes: [UInt8], to path: String, temp: String) throws {
        try io("write", temp) {
            let fd = try FileDescriptor.open(temp, [.writeOnly, .create, .truncate])
            try fd.closeAfter {
                try bytes.withUnsafeBytes { raw in try fd.writeAll(raw) }
                try fd.sync()
            }
        }
        try io("rename", path) { try FileSystem.rename(temp, to: path) }
        let folder = parent(of: path)
        try io("sync folder", folder) { try FileSystem.syncDirectory(folder) }
    }

    func writeManifest(_ map: BucketMap) throws {
        try StoreCore.writeDurably(Array(map.manifestText().utf8), to: manifestPath, temp: tempPath + "/manifest.tmp")
    }

    // MARK: - Paths

    func bucketPath(_ number: Int) -> String { bucketsPath + "/\(number)" }

    /// Folder and file path of `identifier` under the current map. Call on `queue`.
    func location(of identifier: [UInt8], name fileName: String) -> (folder: String, path: String, bucketIndex: Int) {
        let index = confined.map.index(for: identifier)
        let folder = bucketPath(confined.map.buckets[index].number)
        return (folder, folder + "/" + fileName, index)
    }

    /// The file path of `identifier` under the current map, built in one allocation: every read
    /// starts here. Call on `queue`.
    func path(of identifier: String) -> String {
        path(of: identifier, inBucket: confined.map.buckets[confined.map.index(for: identifier.utf8)].number)
    }

    /// The file path of `identifier` in bucket folder `bucket`.
    ///
    /// Written straight into the String's storage: every read builds one, and five `String` appends
    /// cost 1,600 instructions, a twentieth of what blobd does for a GET.
    func path(of identifier: String, inBucket bucket: Int) -> String {
        var fileName = FileNameCoding.name(for: identifier)
        var base = bucketsPath
        return base.withUTF8 { base in
            fileName.withUTF8 { name in
                String(unsafeUninitializedCapacity: base.count + name.count + 22) { out in
                    var position = 0
                    func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
                        guard !bytes.isEmpty else { return }
                        (out.baseAddress! + position).initialize(from: bytes.baseAddress!, count: bytes.count)
                        position += bytes.count
                    }
                    copy(base)
                    out[position] = UInt8(ascii: "/")
                    position += 1
                    position += DecimalDigits.write(bucket, to: out.baseAddress! + position)
                    out[position] = UInt8(ascii: "/")
                    position += 1
                    copy(name)
                    return position
                }
            }
        }
    }

    /// A fresh unique name for a temp or trash file.
    static func uniqueName(_ prefix: String) -> String {
        // A random tag drawn once per process plus a counter: unique without a `getrandom` call per
        // put. Files are created with O_EXCL, so even a clash would fail rather than overwrite.
        let number = uniqueNameCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + uniqueNameTag + String(number, radix: 36)
    }
}

/// This process's part of temp-file names (see ``StoreCore/uniqueName(_:)``).
private let uniqueNameTag: String = {
    var generator = SystemRandomNumberGenerator()
    return String(generator.next() as UInt64, radix: 36) + "-"
}()

/// Temp-file names made so far by this process.
private let uniqueNameCounter = Atomic<UInt64>(0)

/// Maps an `Errno` from a system call to ``BlobStoreError/io(operation:path:errno:)``, naming the operation and path.
@inline(__always)
func io<T>(_ operation: String, _ path: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as Errno { throw BlobStoreError.io(operation: operation, path: path(), errno: error) }
}
