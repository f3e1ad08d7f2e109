import BlobStore
internal import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A daemon's read cache of S3 blobs on local disk, shared by all its stores (one byte budget, one
/// eviction clock); each store reads through it with an ``S3CachedStore``.
///
/// **Files.** The cache owns a folder: `lock` (an exclusive `flock` for as long as the cache lives,
/// so two daemons never share one folder) and `entries/`, which is emptied when the cache starts
/// (the table of entries lives in memory only, so a restart begins cold; no entry outlives the
/// process that knew its S3 ETag). An entry of a small blob (up to
/// ``S3ReadCacheConfiguration/memoryEntryLimit``) is held in memory, under a bound of its own
/// within the capacity; a larger one is one file in the file store's blob format (header with the
/// metadata and the content's XXH64, then the content), under a name never reused while the cache
/// lives, which joins the table only once written whole.
///
/// **Checks.** A fill checks the content against the blob's size and XXH64 (its ETag) once, as it
/// arrives, and keeps the entry only when it matches. Every later read of an entry in a file checks
/// its content against that ETag again (``BlobReadHandle``), so a damaged file is never served
/// whole; a file that cannot be opened or read is dropped, logged, and the read goes to the object
/// store. An entry in memory is served as it was checked.
///
/// **Concurrency.** The table, counters and fills in flight are owned by one mutex, held for
/// bookkeeping only; file I/O runs on the calling (blocking-work) thread outside it.
package final class S3ReadCache: Sendable {
    /// The settings.
    package let configuration: S3ReadCacheConfiguration
    /// Where the entries' files are.
    package let entriesFolder: String
    private let lock: FileDescriptor

    private struct State {
        var index = S3ReadCacheIndex()
        var counters = S3ReadCacheCounters()
        var nextFile: UInt64 = 0
        /// Fills in progress per blob, and whether the blob changed (through this daemon) meanwhile:
        /// such a fill's version may be older than the change, so it is not kept.
        var fillsInFlight: [S3CacheKey: (count: Int, changed: Bool)] = [:]
        /// The questions to the object store in flight per blob, and whether a change made elsewhere
        /// was reported since each was asked: the answer may then predate the change, so it is not
        /// taken for fresh.
        var questions: [S3CacheKey: [UInt64: Bool]] = [:]
        var nextQuestion: UInt64 = 0
    }
    private let state = Locked(State())

    /// Takes the cache folder (creating it), and empties its `entries/` folder. Throws
    /// ``S3ReadCacheError`` naming the folder when it cannot, or when another process holds it.
    package init(_ configuration: S3ReadCacheConfiguration) throws {
        self.configuration = configuration
        let folder = configuration.folder
        entriesFolder = folder + "/entries"
        do { _ = try FileSystem.makeDirectories(folder, permissions: 0o700) } catch {
            throw S3ReadCacheError(folder: folder, reason: "cannot create it: \(error)")
        }
        let lockPath = folder + "/lock"
        let lock: FileDescriptor
        do { lock = try FileDescriptor.open(lockPath, [.readWrite, .create], permissions: 0o600) } catch {
            throw S3ReadCacheError(folder: folder, reason: "cannot open \(lockPath): \(error)")
        }
        do {
            guard try lock.lock(exclusive: true, nonBlocking: true) else {
                try? lock.close()
                throw S3ReadCacheError(folder: folder, reason: "another process (another blobd?) uses it; give each daemon its own cache folder")
            }
        } catch let error as Errno {
            try? lock.close()
            throw S3ReadCacheError(folder: folder, reason: "cannot lock \(lockPath): \(error)")
        }
        self.lock = lock
        do {
            try FileSystem.removeTree(entriesFolder)
            _ = try FileSystem.makeDirectory(entriesFolder, permissions: 0o700)
        } catch {
            try? lock.close()
            throw S3ReadCacheError(folder: folder, reason: "cannot empty \(entriesFolder): \(error)")
        }
    }

    deinit { try? lock.close() }

    /// What the cache has done so far.
    package var counters: S3ReadCacheCounters { state.withLock { $0.counters } }

    /// How many entries, and the bytes they take.
    package var occupancy: (entries: Int, bytes: Int64) { state.withLock { ($0.index.count, $0.index.totalBytes) } }

    /// Entries up to this content size are checked whole against their ETag when opened.
    static let checkedOnOpenLimit: Int64 = 1 << 20

    /// The largest content (with its header) an entry may hold.
    var maximumEntryBytes: Int64 { configuration.maximumEntryBytes }

    // MARK: Reading entries

    /// `key`'s entry, marked used.
    func entry(_ key: S3CacheKey) -> S3CacheEntry? { state.withLock { $0.index.use(key) } }

    /// Whether `entry` was validated within the staleness bound.
    func isFresh(_ entry: S3CacheEntry) -> Bool {
        let bound = configuration.stalenessSeconds
        guard bound > 0, entry.validatedAt > 0 else { return false }
        let now = configuration.now()
        return now >= entry.validatedAt && Double(now - entry.validatedAt) < bound * 1e9
    }

    /// Whether a blob of `metadata` has expired: its version is then never served, whatever the object store says.
    func hasExpired(_ metadata: BlobMetadata) -> Bool {
        metadata.expires.map { $0 <= configuration.date() } ?? false
    }

    /// Call just before asking the object store about `key`'s blob, and ``finish(_:)`` once its
    /// answer is dealt with. The answer is stamped with the time read now: S3 says a version is
    /// current at some moment between this call and the answer's arrival, so the stamp is never
    /// later than that moment, however long the connection, the answer or the transfer take, and
    /// an entry served within the staleness bound of its stamp is at most that bound behind the
    /// object store (docs/SCALE-OUT.md, "Read cache").
    func ask(_ key: S3CacheKey) -> S3CacheQuestion {
        state.withLock { state in
            state.nextQuestion += 1
            state.questions[key, default: [:]][state.nextQuestion] = false
            return S3CacheQuestion(key: key, number: state.nextQuestion, time: max(configuration.now(), 1))
        }
    }

    /// Forgets `question` (its answer has been dealt with).
    func finish(_ question: S3CacheQuestion) {
        state.withLock { state in
            state.questions[question.key]?[question.number] = nil
            if state.questions[question.key]?.isEmpty == true { state.questions[question.key] = nil }
        }
    }

    /// Records that the object store said `entry` is current when asked `question`. Not when a
    /// change of the blob made elsewhere was reported since: that change may be later than the
    /// answer, so the entry stays due for validation.
    func markValidated(_ key: S3CacheKey, _ entry: S3CacheEntry, asked question: S3CacheQuestion) {
        state.withLock { state in
            guard state.questions[key]?[question.number] != true else { return }
            state.index.markValidated(key, objectETag: entry.objectETag, at: question.time)
        }
    }

    /// Opens `entry` for serving: one held in memory as it is (it was checked when it arrived), one
    /// in a file from that file. A file that is missing, damaged or unreadable drops the entry
    /// (logged, counted as a fallback) and gives `nil`: the caller reads from the object store.
    func open(_ key: S3CacheKey, _ entry: S3CacheEntry) -> (any ServedBlob)? {
        if let held = entry.held { return S3ServedBlob(metadata: held.metadata, content: held.content, file: nil) }
        guard let fileName = entry.fileName else { return nil }
        let path = entriesFolder + "/" + fileName
        do {
            guard let handle = try BlobFile.open(path: path, store: key.store, identifier: key.identifier) else {
                // Dropped (and deleted) since it was looked up: not a fault.
                forget(key, fileName: fileName)
                return nil
            }
            // Checked whole now up to 1 MiB (a hash of what was just read, or of a file the page
            // cache holds), so a damaged entry falls back here rather than failing the response; the
            // handle remembers that it passed, so the sender does not hash it again. Larger entries
            // are checked as they are sent, and a damaged one ends its response short.
            let size = handle.metadata.size
            if handle.readsWithoutWaiting {
                _ = try handle.read(0..<size)
            } else if size <= Self.checkedOnOpenLimit {
                try handle.checkContent(throughFileOffset: handle.contentOffset + size, isLast: true)
            }
            return S3ServedBlob(metadata: handle.metadata, content: nil, file: handle)
        } catch {
            configuration.log("read cache: entry \(path) for blob '\(key.identifier)' in store '\(key.store)' is unusable (\(error)); dropped, reading from the object store")
            forget(key, fileName: fileName)
            state.withLock { $0.counters.fallbacks += 1 }
            return nil
        }
    }

    /// Counts a read served from an entry.
    func countHit(validated: Bool) {
        state.withLock {
            $0.counters.hits += 1
            if !validated { $0.counters.servedWithoutValidation += 1 }
        }
    }

    /// Counts an answer of the object store to a cache read.
    func countAnswer(notModified: Bool) {
        state.withLock {
            if notModified { $0.counters.notModified += 1 } else { $0.counters.fetched += 1 }
        }
    }

    // MARK: Filling

    /// What an entry held in memory counts beyond its content: its share of the table.
    package static let memoryEntryOverhead: Int64 = 256

    /// Whether a version of `size` bytes is held in memory rather than in a file.
    private func holdsInMemory(_ size: Int64) -> Bool {
        size <= configuration.memoryEntryLimit && size <= maximumEntryBytes && size + Self.memoryEntryOverhead <= configuration.memoryCapacityBytes
    }

    /// Whether the cache takes a version of `metadata` (else it is read from the object store each time).
    func admits(_ metadata: BlobMetadata) -> Bool {
        holdsInMemory(metadata.size) || metadata.size <= maximumEntryBytes - Int64(BlobFile.header(for: metadata).count)
    }

    /// Reads `version`'s content from `reader` (to the end, or closing it) into `key`'s new entry, and
    /// returns the version to serve. A small blob's entry is held in memory; a larger one is written
    /// to a file in the entries folder, which joins the table only once written whole (the table is
    /// in memory and the folder is emptied at start, so a partly written file is never served).
    ///
    /// The content is checked against the version's size and XXH64 as it arrives, once: by the
    /// reader itself when it checks (``S3ContentReader/checksContent``; its last piece comes only once
    /// the check has passed, else it throws), else here. `nil` when the cache could not keep it (a
    /// local I/O error, or content that does not match; logged): the caller reads from the object
    /// store instead. Throws only what reading `reader` throws (the object store's failure, or its
    /// reader's failed check), and nothing is kept then. The entry counts as validated when
    /// `question` was asked (``ask(_:)``), not when the transfer ends.
    func fill(_ key: S3CacheKey, _ version: S3StoredVersion, from reader: any S3ContentReader, asked question: S3CacheQuestion) throws -> (any ServedBlob)? {
        let inMemory = holdsInMemory(version.metadata.size)
        let fileNumber = state.withLock { state -> UInt64 in
            state.fillsInFlight[key, default: (0, false)].count += 1
            if inMemory { return 0 }
            state.nextFile += 1
            return state.nextFile
        }
        defer {
            state.withLock { state in
                if var record = state.fillsInFlight[key] {
                    record.count -= 1
                    state.fillsInFlight[key] = record.count == 0 ? nil : record
                }
            }
        }
        return inMemory
            ? try fillInMemory(key, version, from: reader, asked: question)
            : try fillFile(key, version, from: reader, fileName: String(fileNumber), asked: question)
    }

    private func fillInMemory(
        _ key: S3CacheKey, _ version: S3StoredVersion, from reader: any S3ContentReader, asked question: S3CacheQuestion
    ) throws -> (any ServedBlob)? {
        let size = Int(version.metadata.size)
        var content = Data(count: size)
        let matches = try content.withUnsafeMutableBytes { raw in
            var hasher = reader.checksContent ? nil : XXH64()
            var received = 0
            while received < size {
                let count = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[received...]))
                if count == 0 { break }
                hasher?.update(UnsafeRawBufferPointer(rebasing: raw[received..<received + count]))
                received += count
            }
            // One more read: the end (or bytes beyond the size), and the check of content that filled the buffer exactly.
            var spare: UInt8 = 0
            let beyond = try withUnsafeMutableBytes(of: &spare) { try reader.read(into: $0) }
            return verdict(key, version, received: Int64(received + beyond), hasher: hasher, reader: reader)
        }
        let served = S3ServedBlob(metadata: version.metadata, content: content, file: nil)
        guard matches else {
            state.withLock { $0.counters.fallbacks += 1 }
            return nil
        }
        let entry = S3CacheEntry(
            held: S3HeldVersion(metadata: version.metadata, content: content), bytes: version.metadata.size + Self.memoryEntryOverhead,
            objectETag: version.objectETag, validatedAt: question.time)
        delete(keep(key, entry, asked: question))
        return served
    }

    private func fillFile(
        _ key: S3CacheKey, _ version: S3StoredVersion, from reader: any S3ContentReader, fileName: String, asked question: S3CacheQuestion
    ) throws -> (any ServedBlob)? {
        let header = BlobFile.header(for: version.metadata)
        let path = entriesFolder + "/" + fileName
        let written: Bool
        do {
            written = try write(header: header, version: version, from: reader, to: path, key: key)
        } catch let failure as LocalFailure {
            reader.close()
            _ = try? FileSystem.unlinkIfExists(path)
            configuration.log("read cache: cannot write \(path) for blob '\(key.identifier)' in store '\(key.store)' (\(failure.reason)); reading from the object store")
            state.withLock { $0.counters.fallbacks += 1 }
            return nil
        } catch {
            _ = try? FileSystem.unlinkIfExists(path)
            throw error
        }
        guard written else {
            _ = try? FileSystem.unlinkIfExists(path)
            state.withLock { $0.counters.fallbacks += 1 }
            return nil
        }
        // Opened before it joins the table: an eviction right after cannot take it from this read.
        let handle: BlobReadHandle?
        do { handle = try BlobFile.open(path: path, store: key.store, identifier: key.identifier) } catch {
            configuration.log("read cache: cannot open the entry just written, \(path) (\(error)); reading from the object store")
            handle = nil
        }
        guard let handle else {
            _ = try? FileSystem.unlinkIfExists(path)
            state.withLock { $0.counters.fallbacks += 1 }
            return nil
        }
        // Its content was checked on its way into the file, just now: sending it does not hash it again.
        handle.markContentChecked()
        let entry = S3CacheEntry(
            fileName: fileName, bytes: Int64(header.count) + version.metadata.size, objectETag: version.objectETag,
            validatedAt: question.time)
        delete(keep(key, entry, asked: question))
        return S3ServedBlob(metadata: handle.metadata, content: nil, file: handle)
    }

    /// Puts a filled entry in the table, unless its blob changed through this daemon while it was
    /// filled (its version may be older than the change); a change made elsewhere reported since
    /// `question` leaves it due for validation. Evicts what no longer fits. Returns the files to
    /// delete: the replaced and evicted entries', or the new one's when it is not kept.
    private func keep(_ key: S3CacheKey, _ entry: S3CacheEntry, asked question: S3CacheQuestion) -> [String] {
        state.withLock { state in
            let changedMeanwhile = state.fillsInFlight[key]?.changed ?? false
            guard !changedMeanwhile else { return entry.fileName.map { [$0] } ?? [] }
            var entry = entry
            if state.questions[key]?[question.number] == true { entry.validatedAt = 0 }
            state.counters.fills += 1
            var obsolete = state.index.insert(key, entry).map { [$0] } ?? []
            let before = state.index.count
            obsolete += state.index.evict(toFit: configuration.capacityBytes, memory: configuration.memoryCapacityBytes)
            state.counters.evictions += before - state.index.count
            return obsolete
        }
    }

    /// A local file operation failed while filling (the object store is not at fault).
    private struct LocalFailure: Error {
        var reason: String
    }

    /// How much of the content one read from the object store and one write to the entry's file take at most.
    private static let fillPiece = 256 * 1024

    /// Writes the entry's file: the header, then the content as it arrives (hashed on the way unless
    /// `reader` checks it). Returns whether the content matched `version`'s size and ETag (a
    /// mismatch is logged).
    private func write(header: [UInt8], version: S3StoredVersion, from reader: any S3ContentReader, to path: String, key: S3CacheKey) throws -> Bool {
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, [.writeOnly, .create, .exclusive, .closeOnExec], permissions: 0o600) } catch {
            throw LocalFailure(reason: "open: \(error)")
        }
        defer { try? file.close() }
        do { try header.withUnsafeBytes { try file.writeAll($0) } } catch { throw LocalFailure(reason: "write: \(error)") }
        let size = version.metadata.size
        var hasher = reader.checksContent ? nil : XXH64()
        var received: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(min(Int64(Self.fillPiece), max(size, 1))) + 1, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try reader.read(into: buffer)
            if count == 0 { break }
            received += Int64(count)
            if received > size { break }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            hasher?.update(bytes)
            do { try file.writeAll(bytes) } catch { throw LocalFailure(reason: "write: \(error)") }
        }
        return verdict(key, version, received: received, hasher: hasher, reader: reader)
    }

    /// Whether content of `received` bytes (hashed by `hasher`, or checked by `reader` when `nil`)
    /// is `version`'s; a mismatch is logged and closes `reader`.
    private func verdict(_ key: S3CacheKey, _ version: S3StoredVersion, received: Int64, hasher: XXH64?, reader: any S3ContentReader) -> Bool {
        let size = version.metadata.size
        let blob = "blob '\(key.identifier)' in store '\(key.store)' (object ETag \(version.objectETag))"
        guard received == size else {
            reader.close()
            configuration.log("read cache: \(blob) sent \(received > size ? "more than" : "\(received) of") its \(size) bytes; not cached, reading from the object store")
            return false
        }
        guard let hasher else { return true }
        let etag = ETag(checksum: hasher.finalize())
        guard etag == version.metadata.etag else {
            configuration.log("read cache: \(blob) has content with XXH64 \(etag), not its ETag \(version.metadata.etag); not cached, reading from the object store")
            return false
        }
        return true
    }

    // MARK: Changes

    /// Drops `key`'s entry (a put or remove through this daemon changed the blob); a fill in
    /// progress for it is not kept.
    func drop(_ key: S3CacheKey) {
        let name: String? = state.withLock { state in
            if state.fillsInFlight[key] != nil { state.fillsInFlight[key]!.changed = true }
            return state.index.remove(key)
        }
        delete(name.map { [$0] } ?? [])
    }

    /// Drops every entry of `store` (a remove-all through this daemon).
    func dropAll(store: String) {
        let names: [String] = state.withLock { state in
            for key in state.fillsInFlight.keys where key.store == store { state.fillsInFlight[key]!.changed = true }
            return state.index.removeAll(store: store)
        }
        delete(names)
    }

    /// Makes `key`'s entry due for validation (a change made elsewhere was reported), and so the
    /// entry of a read asking the object store about it now, whose answer may predate the change.
    /// Quick: no I/O.
    func markStale(_ key: S3CacheKey) {
        state.withLock { state in
            state.index.markStale(key)
            if let asked = state.questions[key] { state.questions[key] = asked.mapValues { _ in true } }
        }
    }

    /// Makes every entry of `store` due for validation, and so those of reads asking now. Quick: no I/O.
    func markAllStale(store: String) {
        state.withLock { state in
            state.index.markAllStale(store: store)
            for (key, asked) in state.questions where key.store == store { state.questions[key] = asked.mapValues { _ in true } }
        }
    }

    /// Drops `key`'s entry if it is still the one in the file `fileName`.
    private func forget(_ key: S3CacheKey, fileName: String) {
        let name: String? = state.withLock { state in
            guard state.index.peek(key)?.fileName == fileName else { return nil }
            return state.index.remove(key)
        }
        delete(name.map { [$0] } ?? [])
    }

    /// Deletes entry files no longer in the table (a reader that has one open keeps reading it).
    private func delete(_ names: [String]) {
        for name in names {
            let path = entriesFolder + "/" + name
            do { _ = try FileSystem.unlinkIfExists(path) } catch {
                configuration.log("read cache: cannot delete \(path): \(error)")
            }
        }
    }
}

/// The read cache's folder cannot be used.
package struct S3ReadCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The cache folder.
    package var folder: String
    /// What is wrong.
    package var reason: String

    /// `read cache folder DIR: REASON`.
    package var description: String { "read cache folder \(folder): \(reason)" }
}

/// A read's question to the object store about one blob (``S3ReadCache/ask(_:)``): which blob, and
/// the time its answer is stamped with.
struct S3CacheQuestion: Sendable {
    /// The blob asked about.
    var key: S3CacheKey
    /// Tells it from other questions about the blob in flight.
    var number: UInt64
    /// Monotonic nanoseconds, read just before asking (at least 1: 0 means "never validated").
    var time: UInt64
}
