package import BlobSystem
import Dispatch
import Foundation
import Synchronization

/// Blocking and callback-based access for threads that live outside Swift concurrency, such as a
/// server's event-loop threads. They block the calling thread on disk I/O: never call them from
/// async code (use the async API there), where they would starve the cooperative pool.
extension PersistentDataStore {
    /// How much ``openForReading(_:)`` reads at once with the header: small blobs arrive whole in that
    /// one `pread`, and a large one (which a server sends with `sendfile`) wastes at most this much copying.
    static let blockingReadLength = 16 * 1024

    /// Opens the current version of a blob for reading (blocking). The handle pins that version:
    /// later puts do not change what it reads. Close it when done.
    public func openForReading(_ identifier: String) throws -> BlobReadHandle {
        try BlobIdentifier.validate(identifier)
        if configuration.inlineCachedReads, let blob = core.cachedReads.open(identifier, readLength: PersistentDataStore.blockingReadLength) {
            return BlobReadHandle(blob)
        }
        let blob = try core.reads.readNow { try core.reads.openCurrent(identifier, readLength: PersistentDataStore.blockingReadLength) }
        return BlobReadHandle(blob)
    }

    /// Starts a put whose content arrives in pieces (blocking calls), committed by ``BlobUpload/commit(completion:)``.
    public func beginUpload(identifier: String?, options: PutOptions) throws -> BlobUpload {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let writer = try TempBlobWriter(
            core: core, identifier: id, options: options, durable: configuration.durability == .durable,
            maximumSize: configuration.maximumBlobSize)
        return BlobUpload(writer: writer)
    }

    /// Removes a blob if `condition` holds; `completion` gets whether it existed (on a store queue).
    ///
    /// The remove is queued for the committer before this returns, behind every change queued
    /// before it (through this API, ``BlobUpload/commit(completion:)`` or the async API), so changes
    /// made one after another commit in that order. A read sees it once `completion` has run.
    public func remove(_ identifier: String, condition: WriteCondition, completion: @escaping @Sendable (Swift.Result<Bool, any Error>) -> Void) {
        if let rule = BlobIdentifier.violation(in: identifier) {
            completion(.failure(BlobStoreError.invalidIdentifier(identifier: identifier, rule: rule)))
            return
        }
        core.submit(.remove(identifier: identifier, condition: condition, durable: configuration.durability == .durable)) { result in
            completion(result.map { outcome in
                if case .removed(_, let existed) = outcome { return existed }
                return false
            })
        }
    }

    /// Removes every blob; `completion` runs on a store queue. (Named apart from the article's `removeAll(completionQueue:completionHandler:)`, so a trailing closure is never ambiguous.)
    ///
    /// Queued before this returns, in call order with other changes, as ``remove(_:condition:completion:)`` is.
    public func removeAllBlobs(completion: @escaping @Sendable (Swift.Result<Void, any Error>) -> Void) {
        core.submit(.removeAll(durable: configuration.durability == .durable)) { result in completion(result.map { _ in () }) }
    }
}

/// One blob version opened for reading: its metadata, its file and where the content starts in it,
/// so a server can `pread` or `sendfile` the content directly.
///
/// Content leaves it checked against the header (see ``read(_:)`` and
/// ``checkContent(throughFileOffset:isLast:)``): a blob file whose length or checksum is wrong is
/// never given out whole.
public final class BlobReadHandle: Sendable {
    /// The version's metadata.
    public let metadata: BlobMetadata
    /// The open file (owned by this handle; closed by ``close()`` or when the handle is released).
    package let fileDescriptor: FileDescriptor
    /// Where the content starts in the file.
    package let contentOffset: Int64
    /// The first content bytes, read together with the header (for a small blob, all of it).
    package let leadingContent: Data
    private let fileEnd: Int64?
    /// How far the content has been checked, and whether the file is closed. Locked so that the
    /// handle can be shared: no read runs on a closed descriptor (whose number the process may have
    /// reused); one user reading it in order never waits.
    private let state: Locked<(check: ContentCheck, closed: Bool)>

    /// A handle on `descriptor`, a file holding the content of the version `metadata` alone (no
    /// header), such as another backend's fetched copy; `path` and `store` are named in errors. The
    /// content is checked against `metadata.etag` as it is read or sent, as a blob file's is.
    package init(contentFile descriptor: FileDescriptor, metadata: BlobMetadata, path: String, store: String) {
        self.metadata = metadata
        fileDescriptor = descriptor
        contentOffset = 0
        leadingContent = Data()
        fileEnd = nil
        state = Locked((
            ContentCheck(store: store, identifier: metadata.identifier, path: path, size: metadata.size, checksum: metadata.etag.checksum),
            false))
    }

    init(_ blob: OpenedBlob) {
        metadata = blob.header.metadata
        fileDescriptor = blob.descriptor
        contentOffset = Int64(blob.headerLength)
        leadingContent = blob.leadingContent
        fileEnd = blob.fileEnd
        state = Locked((blob.contentCheck(), false))
    }

    /// Reads content bytes `range` (clamped to the blob) into memory (blocking). The first read
    /// reads and hashes the whole content (outside `range` too) and throws
    /// ``BlobStoreError/corrupt(path:reason:)`` if the file is shorter or longer than its header
    /// says or the content does not match its ETag; later reads read just their range. After
    /// ``close()`` it throws ``BlobStoreError/io(operation:path:errno:)`` with `EBADF`.
    public func read(_ range: Range<Int64>) throws -> Data {
        let upper = min(range.upperBound, metadata.size)
        let lower = min(range.lowerBound, upper)
        return try state.withLock { state in
            try BlobReadHandle.checkOpen(state)
            return try state.check.read(lower..<upper, leading: leadingContent, fileEnd: fileEnd, descriptor: fileDescriptor)
        }
    }

    /// Before content up to file offset `end` is sent from ``fileDescriptor`` (with `sendfile`):
    /// reads and hashes the content up to there, and when `isLast` (the part that ends the
    /// response) the whole content to its end, so the last part goes out only once the blob has
    /// passed its check. Throws ``BlobStoreError/corrupt(path:reason:)`` (or `io`) otherwise: the
    /// sender must then end the response short. Blocking.
    package func checkContent(throughFileOffset end: Int64, isLast: Bool) throws {
        try state.withLock { state in
            try BlobReadHandle.checkOpen(state)
            if state.check.passed { return }
            if state.check.checked == 0 {
                // (A known end is never inside the content: a short file is found by reading on.)
                if let fileEnd, fileEnd > contentOffset + metadata.size { throw state.check.longer() }
                state.check.feed(leadingContent)
            }
            try state.check.advance(to: isLast ? metadata.size : end - contentOffset, descriptor: fileDescriptor)
        }
    }

    /// ``checkContent(throughFileOffset:isLast:)`` with reads that never wait for the disk, for an
    /// event loop: `false` when one would (the check then goes on from where it stopped, on a thread
    /// that may wait). Throws as ``checkContent(throughFileOffset:isLast:)`` does.
    package func checkContentIfCached(throughFileOffset end: Int64, isLast: Bool) throws -> Bool {
        try state.withLock { state in
            try BlobReadHandle.checkOpen(state)
            if state.check.passed { return true }
            if state.check.checked == 0 {
                if let fileEnd, fileEnd > contentOffset + metadata.size { throw state.check.longer() }
                state.check.feed(leadingContent)
            }
            return try state.check.advanceIfCached(to: isLast ? metadata.size : end - contentOffset, descriptor: fileDescriptor)
        }
    }

    /// How far the content has passed its check, as a file offset: `Int64.max` once the whole
    /// content has, `0` before the first check (which also checks the file's length). Content
    /// before this offset may be sent, except the part holding the last byte, which waits for the
    /// whole. Never waits for the disk, so an event loop can ask before each `sendfile` and hand the
    /// reading to another thread; but a check in progress holds the lock this takes through its
    /// reads, so ask only while none runs.
    package func contentCheckedThrough() -> Int64 {
        state.withLock { state in
            if state.check.passed { return Int64.max }
            return state.check.checked > 0 ? contentOffset + state.check.checked : 0
        }
    }

    /// Skips the check of the content, for a file whose writer has just checked every byte it wrote
    /// against the header's checksum (an S3 read cache's new entry), so serving it does not read
    /// and hash it all again.
    package func markContentChecked() {
        state.withLock { $0.check.trustWriter() }
    }

    /// Closes the file once no read is running; later reads throw, later calls do nothing.
    public func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            try? fileDescriptor.close()
        }
    }

    private static func checkOpen(_ state: (check: ContentCheck, closed: Bool)) throws {
        if state.closed { throw BlobStoreError.io(operation: "read (handle closed)", path: state.check.path, errno: ErrorNumber(rawValue: EBADF)) }
    }

    deinit { close() }
}

/// A put fed piece by piece from a thread outside Swift concurrency. Content goes to a temp file as
/// it arrives, in the order of the ``append(_:)`` calls; nothing is visible until the commit.
///
/// Safe to hand from thread to thread: a lock serializes the calls (one owner feeding it in order
/// never waits on it), and after ``commit(completion:)`` or ``cancel()`` further calls do nothing.
public final class BlobUpload: Sendable {
    /// The temp file being written; `nil` once committed or cancelled. Only reached under the lock.
    private let writer: Locked<TempBlobWriter?>

    init(writer: TempBlobWriter) {
        identifier = writer.identifier
        self.writer = Locked(writer)
    }

    /// The identifier being written (generated if the put did not name one).
    public let identifier: String

    /// Appends content (blocking). On error the upload is cancelled.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        try writer.withLock { writer in
            guard let current = writer else { return }
            do { try current.append(bytes) } catch {
                writer = nil
                current.abandon()
                throw error
            }
        }
    }

    /// Finishes the temp file (blocking) and queues the commit; `completion` runs once it is
    /// committed (and synced, if durable: the committer syncs batches) or has failed — on the
    /// calling thread before this returns when a relaxed commit finds the committer idle,
    /// otherwise on the store's commit thread.
    public func commit(completion: @escaping @Sendable (Swift.Result<BlobMetadata, any Error>) -> Void) {
        let finished: Swift.Result<(TempBlobWriter, PreparedPut), any Error>? = writer.withLock { writer in
            guard let current = writer else { return nil }
            writer = nil
            do { return .success((current, try current.finish())) } catch {
                current.abandon()
                return .failure(error)
            }
        }
        switch finished {
        case nil:
            return
        case .failure(let error):
            completion(.failure(error))
        case .success(let (current, prepared)):
            // Outside the lock: a relaxed commit may run `completion` on this thread.
            current.core.submit(.put(prepared), inline: true) { result in completion(Swift.Result { try result.storedMetadata() }) }
        }
    }

    /// Drops the upload and its temp file.
    public func cancel() {
        writer.withLock { writer in
            writer?.abandon()
            writer = nil
        }
    }
}
