import BlobSystem
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
public final class BlobReadHandle: @unchecked Sendable {
    /// The version's metadata.
    public let metadata: BlobMetadata
    /// The open file (owned by this handle; closed by ``close()`` or when the handle is released).
    public let fileDescriptor: FileDescriptor
    /// Where the content starts in the file.
    public let contentOffset: Int64
    /// The first content bytes, read together with the header (for a small blob, all of it).
    public let leadingContent: Data
    private let fileEnd: Int64?
    /// Owned by whoever uses the handle (one thread at a time, like the descriptor's offset-free reads).
    private var check: ContentCheck
    private let closed = Atomic<Bool>(false)

    init(_ blob: OpenedBlob) {
        metadata = blob.header.metadata
        fileDescriptor = blob.descriptor
        contentOffset = Int64(blob.headerLength)
        leadingContent = blob.leadingContent
        fileEnd = blob.fileEnd
        check = blob.contentCheck()
    }

    /// Reads content bytes `range` (clamped to the blob) into memory (blocking). The first read
    /// reads and hashes the whole content (outside `range` too) and throws
    /// ``BlobStoreError/corrupt(path:reason:)`` if the file is shorter or longer than its header
    /// says or the content does not match its ETag; later reads read just their range.
    public func read(_ range: Range<Int64>) throws -> Data {
        let upper = min(range.upperBound, metadata.size)
        let lower = min(range.lowerBound, upper)
        return try check.read(lower..<upper, leading: leadingContent, fileEnd: fileEnd, descriptor: fileDescriptor)
    }

    /// Before content up to file offset `end` is sent from ``fileDescriptor`` (with `sendfile`):
    /// reads and hashes the content up to there, and when `isLast` (the part that ends the
    /// response) the whole content to its end, so the last part goes out only once the blob has
    /// passed its check. Throws ``BlobStoreError/corrupt(path:reason:)`` (or `io`) otherwise: the
    /// sender must then end the response short. Blocking.
    package func checkContent(throughFileOffset end: Int64, isLast: Bool) throws {
        if check.passed { return }
        if check.checked == 0 {
            // (A known end is never inside the content: a short file is found by reading on.)
            if let fileEnd, fileEnd > contentOffset + metadata.size { throw check.longer() }
            check.feed(leadingContent)
        }
        try check.advance(to: isLast ? metadata.size : end - contentOffset, descriptor: fileDescriptor)
    }

    /// Closes the file; later calls do nothing.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { try? fileDescriptor.close() }
    }

    deinit { close() }
}

/// A put fed piece by piece from a thread outside Swift concurrency. Not thread-safe: one owner
/// calls it, in order. Content goes to a temp file as it arrives; nothing is visible until the commit.
public final class BlobUpload: @unchecked Sendable {
    private let writer: TempBlobWriter
    private var finished = false

    init(writer: TempBlobWriter) { self.writer = writer }

    /// The identifier being written (generated if the put did not name one).
    public var identifier: String { writer.identifier }

    /// Appends content (blocking). On error the upload is cancelled.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        do { try writer.append(bytes) } catch {
            cancel()
            throw error
        }
    }

    /// Finishes the temp file (blocking) and queues the commit; `completion` runs once it is
    /// committed (and synced, if durable: the committer syncs batches) or has failed — on the
    /// calling thread before this returns when a relaxed commit finds the committer idle,
    /// otherwise on the store's commit thread.
    public func commit(completion: @escaping @Sendable (Swift.Result<BlobMetadata, any Error>) -> Void) {
        guard !finished else { return }
        finished = true
        let prepared: PreparedPut
        do { prepared = try writer.finish() } catch {
            writer.abandon()
            completion(.failure(error))
            return
        }
        writer.core.submit(.put(prepared), inline: true) { result in completion(Swift.Result { try result.storedMetadata() }) }
    }

    /// Drops the upload and its temp file.
    public func cancel() {
        guard !finished else { return }
        finished = true
        writer.abandon()
    }
}
