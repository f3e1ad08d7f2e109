internal import BlobSystem
import Dispatch
import Foundation

/// A named store of blobs in a folder on disk: many concurrent readers, atomic replacement, and
/// durable acknowledgements.
///
/// Reads run concurrently on the store's concurrent `DispatchQueue`; every change (put, remove,
/// remove-all) is committed in a `.barrier` work item, so no reader ever sees a half-written blob.
/// A read that the kernel's caches can serve without waiting skips the queue
/// (``StoreConfiguration/inlineCachedReads``); it sees the same versions a queued read would.
/// Content is written and synced to a temp file outside the barrier; concurrent changes are
/// committed in batches that share their folder syncs (group commit).
///
/// Instances are cheap: all instances on the same folder in a process share one engine. Another
/// process opening the same store waits up to ``StoreConfiguration/lockWait`` for this one to close
/// it, then gets ``BlobStoreError/storeLocked(path:holder:)``.
public final class PersistentDataStore: BlobStoring, Sendable {
    /// The store's name (its folder's name under the root).
    public let name: String
    /// The root folder that holds this store's folder.
    public let rootURL: URL
    /// How this instance stores blobs.
    public let configuration: StoreConfiguration
    let core: StoreCore

    /// Opens (creating if needed) the store `name` under `root` (default: ``StoreRoot/defaultURL``).
    public init(name: String, root: URL = StoreRoot.defaultURL, configuration: StoreConfiguration = StoreConfiguration()) throws {
        try StoreName.validate(name)
        self.name = name
        self.rootURL = root.standardizedFileURL
        self.configuration = configuration
        core = try StoreRegistry.core(
            root: rootURL.path, name: name, bucketCapacity: configuration.bucketCapacity, lockWait: configuration.lockWait,
            policy: configuration.policy, clock: configuration.clock, sharedMemoryTier: configuration.sharedMemoryTier)
        core.memoryTier.raiseBudget(to: configuration.memoryTierBytes)
    }

    /// Opens the existing store `name` under `root` (default: ``StoreRoot/defaultURL``) for reading
    /// only, without taking its lock, so it works while another process (blobd, or another program
    /// with the store open) holds the store and changes it. The async reads (get, head, stream,
    /// download, list, statistics, verify) see every blob whose put was acknowledged before they
    /// started, following the other process's bucket splits (see "Processes" in STORAGE.md). Every
    /// change (put, remove, remove-all, through any API) fails with
    /// ``BlobStoreError/io(operation:path:errno:)`` and `EROFS`; ``changes()`` and
    /// ``observeChanges(_:)`` report nothing (the other process's changes are not seen as events).
    /// `configuration` matters only for reads (``StoreConfiguration/inlineCachedReads``). Throws
    /// `ENOENT` when the store's folder does not exist; creates nothing.
    public init(readingOnly name: String, root: URL = StoreRoot.defaultURL, configuration: StoreConfiguration = StoreConfiguration()) throws {
        try StoreName.validate(name)
        self.name = name
        self.rootURL = root.standardizedFileURL
        self.configuration = configuration
        core = try StoreRegistry.readOnlyCore(root: rootURL.path, name: name, clock: configuration.clock)
    }

    /// Whether this instance was opened with ``init(readingOnly:root:configuration:)``.
    public var isReadOnly: Bool { core.readOnly }

    /// The store's folder.
    public var folderURL: URL { rootURL.appendingPathComponent(name, isDirectory: true) }

    /// Set when opening found that the store's file system refuses `fsync` or `fdatasync` (or one
    /// failed): a sentence naming the path and errno. On such a file system durable puts, and relaxed
    /// puts that replace a blob, fail rather than be acknowledged. `nil` when both syncs worked.
    public var syncWarning: String? { core.syncWarning }

    private var durable: Bool { configuration.durability == .durable }

    // MARK: - Put

    /// Stores `data` under `identifier` (a new UUID string when `nil`) and returns the new version's metadata.
    @discardableResult
    public func put(_ data: Data, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        try core.refuseIfReadOnly("put")
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        return try await writeAndCommit { [core, durable, configuration] in
            let writer = try TempBlobWriter(core: core, identifier: id, options: options, durable: durable, maximumSize: configuration.maximumBlobSize)
            do {
                try data.withUnsafeBytes { try writer.append($0) }
                return try writer.finish()
            } catch {
                writer.discard()
                throw error
            }
        }
    }

    /// Stores the chunks of `chunks` as one blob; memory use is bounded by the chunk size.
    @discardableResult
    public func put<Chunks: AsyncSequence>(chunks: Chunks, identifier: String?, options: PutOptions) async throws -> BlobMetadata
    where Chunks.Element == Data {
        try core.refuseIfReadOnly("put")
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let writer = try await onIO { [core, durable, configuration] in
            try TempBlobWriter(core: core, identifier: id, options: options, durable: durable, maximumSize: configuration.maximumBlobSize)
        }
        do {
            for try await chunk in chunks {
                try await onIO { try chunk.withUnsafeBytes { try writer.append($0) } }
            }
            let prepared = try await onIO { try writer.finish() }
            return try await commitPut(prepared)
        } catch {
            _ = try? await onIO { writer.discard() }
            throw error
        }
    }

    /// Stores the contents of the file at `fileURL`, read in 1 MiB chunks.
    @discardableResult
    public func put(contentsOf fileURL: URL, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        try core.refuseIfReadOnly("put")
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        return try await writeAndCommit { [core, durable, configuration] in
            let path = fileURL.path
            let source = try io("open", path) { try FileDescriptor.open(path, [.readOnly]) }
            return try source.closeAfter {
                let writer = try TempBlobWriter(core: core, identifier: id, options: options, durable: durable, maximumSize: configuration.maximumBlobSize)
                do {
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                    defer { buffer.deallocate() }
                    while true {
                        let count = try io("read", path) { try source.read(into: buffer) }
                        if count == 0 { break }
                        try writer.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    }
                    return try writer.finish()
                } catch {
                    writer.discard()
                    throw error
                }
            }
        }
    }

    /// Writes a temp file with `prepare` on the I/O queue and submits its commit from there, so the
    /// awaiting task is resumed once, by the committer — not once after the write and again after the
    /// commit (each resumption is a thread wake-up, which costs more than writing 4 KiB here).
    private func writeAndCommit(_ prepare: @escaping @Sendable () throws -> PreparedPut) async throws -> BlobMetadata {
        let ioQueue = core.ioQueues.forCurrentTask
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<BlobMetadata, any Error>) in
            ioQueue.async { [core] in
                let prepared: PreparedPut
                do {
                    prepared = try prepare()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                // On the I/O queue, so a relaxed put may commit right here (see `StoreCore.submit`).
                core.submit(.put(prepared), inline: true) { result in
                    if case .failure = result {
                        // The committer reclaims a failed put's temp file in the background; make sure
                        // it is gone before the failure is reported (the caller may exit at once).
                        prepared.removeTempFileIfLeft()
                    }
                    continuation.resume(with: Swift.Result { try result.storedMetadata() })
                }
            }
        }
    }

    private func commitPut(_ prepared: PreparedPut) async throws -> BlobMetadata {
        do {
            return try Swift.Result<MutationOutcome, any Error>.success(try await core.commit(.put(prepared))).storedMetadata()
        } catch {
            // The committer reclaims a failed put's temp file in the background; make sure it is
            // gone before the failure is reported (the caller may exit at once).
            _ = try? await onIO { prepared.removeTempFileIfLeft() }
            throw error
        }
    }

    // MARK: - Get

    /// The whole content of a blob.
    public func get(_ identifier: String) async throws -> Data {
        try BlobIdentifier.validate(identifier)
        // Served here when nothing has to wait: two thread wake-ups (to the queue and back) cost
        // several times a cached 4 KiB read.
        let ticket: MemoryTier.Ticket?
        switch contentAtOnce(identifier) {
        case .content(let content): return content
        case .wait(let missed): ticket = missed
        }
        return try await core.reads.read { [core] in
            let blob = try core.reads.openLatest(identifier)
            defer { try? blob.descriptor.close() }
            let content = try core.reads.content(of: blob, range: 0..<blob.header.size)
            core.memoryTier.fill(blob.header, content: content, ticket: ticket)
            return content
        }
    }

    /// The bytes `range` of a blob, clamped at its end.
    public func get(_ identifier: String, range: Range<Int64>) async throws -> Data {
        try BlobIdentifier.validate(identifier)
        if case .hit(let metadata, let content) = memoryTierLookup(identifier) {
            let clamped = try ContentInspection.clamp(range, size: metadata.size, store: name, identifier: identifier)
            return content.subdata(in: Int(clamped.lowerBound)..<Int(clamped.upperBound))
        }
        return try await core.reads.read { [core, name] in
            let blob = try core.reads.openLatest(identifier, readLength: 4096)
            defer { try? blob.descriptor.close() }
            let clamped = try ContentInspection.clamp(range, size: blob.header.size, store: name, identifier: identifier)
            return try core.reads.content(of: blob, range: clamped)
        }
    }

    /// A blob's content as chunks of at most `chunkSize` bytes, read from one version as they are consumed.
    public func stream(_ identifier: String, range: Range<Int64>?, chunkSize: Int) async throws -> BlobByteStream {
        try BlobIdentifier.validate(identifier)
        let (blob, clamped) = try await core.reads.read { [core, name] in
            let blob = try core.reads.openLatest(identifier, readLength: 4096)
            do {
                let clamped = try ContentInspection.clamp(range ?? 0..<blob.header.size, size: blob.header.size, store: name, identifier: identifier)
                return (blob, clamped)
            } catch {
                try? blob.descriptor.close()
                throw error
            }
        }
        let reader = BlobFileReader(blob: blob, range: clamped, chunkSize: max(1, chunkSize), queue: core.ioQueues.forCurrentTask)
        return BlobByteStream(metadata: blob.header.metadata, range: clamped) { try await reader.next() }
    }

    /// Writes a blob's content to `fileURL` (through a temp file beside it, renamed when complete).
    public func download(_ identifier: String, to fileURL: URL) async throws -> BlobMetadata {
        try BlobIdentifier.validate(identifier)
        let blob = try await core.reads.read { [core] in try core.reads.openLatest(identifier, readLength: 4096) }
        return try await onIO {
            defer { try? blob.descriptor.close() }
            let target = fileURL.path
            let temp = target + ".part-" + StorePaths.uniqueName("")
            do {
                let out = try io("create", temp) { try FileDescriptor.open(temp, [.writeOnly, .create, .truncate]) }
                try out.closeAfter {
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                    defer { buffer.deallocate() }
                    var offset: Int64 = 0
                    // Checked as it is copied; the file is renamed into place only if it passed.
                    var check = blob.contentCheck()
                    while offset < blob.header.size {
                        let want = Int(min(Int64(buffer.count), blob.header.size - offset))
                        let count = try io("read", blob.path) {
                            try blob.descriptor.read(
                                fromAbsoluteOffset: Int64(blob.headerLength) + offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]))
                        }
                        guard count > 0 else { throw check.endsEarly(at: offset) }
                        check.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                        try io("write", temp) { try out.writeAll(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
                        offset += Int64(count)
                    }
                    try check.finish(descriptor: blob.descriptor)
                }
                try io("rename", target) { try FileSystem.rename(temp, to: target) }
            } catch {
                _ = try? FileSystem.unlinkIfExists(temp)
                throw error
            }
            return blob.header.metadata
        }
    }

    /// The metadata of a blob; throws ``BlobStoreError/notFound(store:identifier:)``.
    public func head(_ identifier: String) async throws -> BlobMetadata {
        try BlobIdentifier.validate(identifier)
        if case .hit(let metadata, _) = memoryTierLookup(identifier) { return metadata }
        if configuration.inlineCachedReads, let blob = core.cachedReads.open(identifier, readLength: 4096) {
            try? blob.descriptor.close()
            return blob.header.metadata
        }
        return try await core.reads.read { [core] in
            let blob = try core.reads.openLatest(identifier, readLength: 4096)
            try? blob.descriptor.close()
            return blob.header.metadata
        }
    }

    /// Whether a blob exists.
    public func exists(_ identifier: String) async throws -> Bool {
        do {
            _ = try await head(identifier)
            return true
        } catch BlobStoreError.notFound {
            return false
        }
    }

    // MARK: - Remove

    /// Removes a blob if `condition` holds; returns whether it existed.
    @discardableResult
    public func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        try BlobIdentifier.validate(identifier)
        try core.refuseIfReadOnly("remove")
        guard case .removed(_, let existed) = try await core.commit(.remove(identifier: identifier, condition: condition, durable: durable)) else {
            preconditionFailure("a remove commits to .removed")
        }
        return existed
    }

    /// Removes every blob of the store.
    public func removeAll() async throws {
        try core.refuseIfReadOnly("remove all")
        _ = try await core.commit(.removeAll(durable: durable))
    }

    // MARK: - Listing, totals, changes

    /// Count and total content size (the first call scans the store; later ones are O(1); a store
    /// opened read-only counts afresh every time, as another process changes it).
    public func statistics() async throws -> StoreStatistics {
        try await core.statistics()
    }

    /// One page of blobs' metadata; see ``ListQuery``.
    public func list(_ query: ListQuery) async throws -> ListPage { try await core.list(query) }

    /// Changes committed from now on, in commit order.
    public func changes() -> AsyncStream<BlobChange> { core.broadcaster.subscribe() }

    /// Calls `observer` with every change of this store from now on, in commit order, on the thread
    /// that commits the change's batch (the store's commit thread, or for a relaxed put the thread
    /// that wrote it), **before** the change is acknowledged to the writer — so whoever sees the
    /// acknowledgement can rely on the observer having seen the change (a server forwarding events
    /// gets read-your-writes ordering). The observer must be quick and must not block or call back
    /// into the store. Observers stay for the life of the store's engine.
    public func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) {
        core.broadcaster.observe(observer)
    }

    /// Checks every blob against its checksum and reports damaged and foreign files.
    public func verify() async throws -> VerificationReport { try await core.verify() }

    /// ``verify()``, and with `repair` also moves every corrupt and orphaned file or folder found into
    /// the store's `quarantine/` folder (listed in the report's `quarantined`), so that afterwards the
    /// store verifies clean. A store opened read-only refuses a repair (`EROFS`).
    public func verify(repair: Bool) async throws -> VerificationReport {
        repair ? try await core.repair() : try await verify()
    }

    // MARK: - Helpers

    /// Runs blocking work on the store's I/O queue, never on the Swift concurrency pool.
    func onIO<T>(_ body: @escaping @Sendable () throws -> sending T) async throws -> sending T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            core.ioQueues.forCurrentTask.async { continuation.resume(with: Swift.Result { try body() }) }
        }
    }
}

/// Carries a value across an isolation boundary where ownership passes from one side to the other
/// (produced on a queue, consumed by the awaiting task) and the value is never used by both at once,
/// where no `sending` can say so: into Dispatch's `@Sendable` closures.
struct UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
