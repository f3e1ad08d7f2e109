internal import BlobSystem
import Foundation

/// A blob store that keeps everything in memory, as Core Data's in-memory store does: for tests,
/// previews and caches that need not outlive the process.
///
/// It behaves exactly like ``PersistentDataStore`` — same validation, content types, ETags,
/// conditions, ranges, listing order, cursors and change events — because both run the same
/// behavioural suite. Only durability differs: everything is gone when the store is.
///
/// ## Who owns what
/// - `state` (a `Locked`) owns every stored blob, the running totals, the change sequence number
///   and the change subscribers. All reads and writes of them happen inside `state.withLock`,
///   which is what makes a condition check and its change one atomic step, and what puts
///   change events in commit order (they are yielded while the lock is held).
/// - Blob contents are immutable `Data` values. A reader copies the value out under the lock
///   (copy-on-write, no byte copy) and reads it after releasing the lock, so a stream or range
///   read sees one version even while writers replace it.
/// - Incoming content (a `Data`, a chunk sequence, a file) belongs to the calling task until it
///   is complete and validated; only then is the lock taken to commit it. Nothing is stored
///   when reading, validation or the condition fails.
/// - Each subscriber's `AsyncStream` continuation is owned by `state`; the stream's termination
///   handler removes it (the handler holds the store weakly, so subscribers do not keep it alive).
public final class InMemoryBlobStore: BlobStoring {
    /// The store's name.
    public let name: String

    /// One stored version: what `head` returns and the bytes.
    private struct Entry: Sendable {
        var metadata: BlobMetadata
        var content: Data
    }

    /// Everything mutable; only touched inside `state.withLock`.
    private struct State: Sendable {
        /// Keyed by the identifier's UTF-8 bytes: `String` equality is canonical equivalence, and two
        /// identifiers that differ only in normalisation are two blobs (as two file names are).
        var blobs: [[UInt8]: Entry] = [:]
        /// Sum of the sizes in `blobs`.
        var totalBytes: Int64 = 0
        /// Sequence number of the last committed change (0 before the first).
        var sequence: UInt64 = 0
        /// Live change subscribers by registration number.
        var subscribers: [UInt64: AsyncStream<BlobChange>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        /// Called with every change while it commits (``InMemoryBlobStore/observeChanges(_:)``).
        var observers: [@Sendable (BlobChange) -> Void] = []

        /// Assigns the next sequence number to `kind` and delivers it to every subscriber.
        mutating func publish(_ kind: BlobChange.Kind, store: String, date: Date) {
            sequence += 1
            let change = BlobChange(sequence: sequence, store: store, kind: kind, date: date)
            for continuation in subscribers.values {
                continuation.yield(change)
            }
            for observer in observers { observer(change) }
        }
    }

    private let state = Locked(State())

    /// The order of the article calls made through this instance (``ArticleDataStoring``).
    public let articleCallOrder = ArticleCallOrder()

    /// Creates an empty store; throws ``BlobStoreError/invalidStoreName(name:reason:)`` for a bad name.
    public init(name: String = "memory") throws {
        try StoreName.validate(name)
        self.name = name
    }

    deinit {
        let continuations = state.withLock { state in
            let all = Array(state.subscribers.values)
            state.subscribers.removeAll()
            return all
        }
        for continuation in continuations { continuation.finish() }
    }

    /// Number of live change subscribers (for tests).
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    // MARK: - Writing

    /// Stores `data` under `identifier` (a new UUID string when `nil`) and returns the new version's metadata.
    public func put(_ data: Data, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        return try commit(data, identifier: id, options: options)
    }

    /// Stores the concatenation of `chunks`, gathered in memory first (this store holds every blob in memory anyway).
    public func put<Chunks: AsyncSequence>(chunks: Chunks, identifier: String?, options: PutOptions) async throws -> BlobMetadata
    where Chunks.Element == Data {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        var content = Data()
        for try await chunk in chunks {
            content.append(chunk)
        }
        return try commit(content, identifier: id, options: options)
    }

    /// Reads the whole file into memory (this store holds every blob in memory anyway), then stores it.
    public func put(contentsOf fileURL: URL, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let path = fileURL.path
        let source: FileDescriptor
        do {
            source = try FileDescriptor.open(path, .readOnly)
        } catch {
            throw BlobStoreError.io(operation: "open", path: path, errno: error)
        }
        let content: Data
        do {
            content = try source.closeAfter { () throws(Errno) in try Self.readAll(source) }
        } catch {
            throw BlobStoreError.io(operation: "read", path: path, errno: error)
        }
        return try commit(content, identifier: id, options: options)
    }

    /// Validates complete content, then checks the condition and stores it in one step (also the
    /// commit of a served upload, which runs on a server's blocking-work thread).
    func commit(_ data: Data, identifier id: String, options: PutOptions) throws -> BlobMetadata {
        // Stored content always starts at index 0, so callers can index what `get` returns.
        let content = data.startIndex == 0 ? data : Data(data)
        let inspected = try ContentInspection.inspect(
            store: name, identifier: id, options: options, image: ImageValidator.validate(content), size: Int64(content.count),
            wholeContent: { content })
        let etag = ETag(checksum: XXH64.hash(content))
        let key = Array(id.utf8)
        return try state.withLock { (state) throws(BlobStoreError) -> BlobMetadata in
            let current = state.blobs[key]
            try Self.check(options.condition, current: current?.metadata.etag, store: name, identifier: id)
            let now = Self.now()
            let metadata = BlobMetadata(
                identifier: id, size: Int64(content.count), contentType: inspected.contentType, etag: etag,
                created: current?.metadata.created ?? now, modified: now,
                userMetadata: options.userMetadata, image: inspected.image)
            state.totalBytes += metadata.size - (current?.metadata.size ?? 0)
            state.blobs[key] = Entry(metadata: metadata, content: content)
            state.publish(.put(metadata), store: name, date: now)
            return metadata
        }
    }

    /// Throws `preconditionFailed` unless `condition` holds for a blob whose current ETag is `current` (`nil`: absent).
    private static func check(_ condition: WriteCondition, current: ETag?, store: String, identifier: String) throws(BlobStoreError) {
        switch condition {
        case .none:
            return
        case .ifNoneMatch:
            if let current {
                throw .preconditionFailed(store: store, identifier: identifier, expected: nil, actual: current)
            }
        case .ifMatch(let expected):
            if current != expected {
                throw .preconditionFailed(store: store, identifier: identifier, expected: expected, actual: current)
            }
        }
    }

    /// Removes a blob, if `condition` holds; returns whether it existed.
    @discardableResult
    public func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        try BlobIdentifier.validate(identifier)
        let key = Array(identifier.utf8)
        return try state.withLock { (state) throws(BlobStoreError) -> Bool in
            let current = state.blobs[key]
            try Self.check(condition, current: current?.metadata.etag, store: name, identifier: identifier)
            guard let current else { return false }
            state.blobs[key] = nil
            state.totalBytes -= current.metadata.size
            state.publish(.removed(identifier: identifier), store: name, date: Self.now())
            return true
        }
    }

    /// Removes every blob; a ``BlobChange/Kind/removedAll`` event is posted even if it was empty.
    public func removeAll() async throws {
        state.withLock { state in
            state.blobs.removeAll()
            state.totalBytes = 0
            state.publish(.removedAll, store: name, date: Self.now())
        }
    }

    // MARK: - Reading

    /// The current version of `identifier`, or `notFound`.
    private func entry(_ identifier: String) throws(BlobStoreError) -> Entry {
        try BlobIdentifier.validate(identifier)
        let key = Array(identifier.utf8)
        guard let entry = state.withLock({ $0.blobs[key] }) else {
            throw .notFound(store: name, identifier: identifier)
        }
        return entry
    }

    /// The current version's metadata and content, from one version (for a server's reads).
    func version(_ identifier: String) throws(BlobStoreError) -> (metadata: BlobMetadata, content: Data) {
        let entry = try entry(identifier)
        return (entry.metadata, entry.content)
    }

    /// The whole content of a blob.
    public func get(_ identifier: String) async throws -> Data {
        try entry(identifier).content
    }

    /// The bytes `range` of a blob (clamped at its end); throws `rangeNotSatisfiable` if it starts past the end.
    public func get(_ identifier: String, range: Range<Int64>) async throws -> Data {
        let entry = try entry(identifier)
        let clamped = try ContentInspection.clamp(range, size: entry.metadata.size, store: name, identifier: identifier)
        return entry.content.subdata(in: Int(clamped.lowerBound)..<Int(clamped.upperBound))
    }

    /// A blob's content as chunks of at most `chunkSize` bytes (at least 1) from the version current at the call.
    public func stream(_ identifier: String, range: Range<Int64>?, chunkSize: Int) async throws -> BlobByteStream {
        let entry = try entry(identifier)
        let size = entry.metadata.size
        let clamped = try range.map { (range) throws(BlobStoreError) in
            try ContentInspection.clamp(range, size: size, store: name, identifier: identifier)
        } ?? 0..<size
        let content = entry.content
        let step = Int64(max(1, chunkSize))
        let position = Locked(clamped.lowerBound)
        let end = clamped.upperBound
        return BlobByteStream(metadata: entry.metadata, range: clamped) {
            position.withLock { offset -> Data? in
                guard offset < end else { return nil }
                let next = min(offset + step, end)
                defer { offset = next }
                return content.subdata(in: Int(offset)..<Int(next))
            }
        }
    }

    /// Writes the current version to a temporary file beside `fileURL`, syncs it, then renames it over `fileURL`.
    public func download(_ identifier: String, to fileURL: URL) async throws -> BlobMetadata {
        let entry = try entry(identifier)
        let target = fileURL.path
        let temporary = fileURL.deletingLastPathComponent()
            .appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString).download").path
        var step = "create"
        do {
            let fd = try FileDescriptor.open(temporary, [.writeOnly, .create, .exclusive], permissions: 0o644)
            try fd.closeAfter { () throws(Errno) in
                step = "write"
                let failure = entry.content.withUnsafeBytes { bytes -> Errno? in
                    do throws(Errno) { try fd.writeAll(bytes) } catch { return error }
                    return nil
                }
                if let failure { throw failure }
                step = "fsync"
                try fd.sync()
            }
            step = "rename"
            try FileSystem.rename(temporary, to: target)
        } catch {
            _ = try? FileSystem.unlinkIfExists(temporary)
            throw BlobStoreError.io(operation: step, path: step == "rename" ? target : temporary, errno: error)
        }
        return entry.metadata
    }

    /// The metadata of a blob; throws `notFound`.
    public func head(_ identifier: String) async throws -> BlobMetadata {
        try entry(identifier).metadata
    }

    /// Whether a blob with this identifier exists.
    public func exists(_ identifier: String) async throws -> Bool {
        try BlobIdentifier.validate(identifier)
        let key = Array(identifier.utf8)
        return state.withLock { $0.blobs[key] != nil }
    }

    /// Count and total size of the blobs.
    public func statistics() async throws -> StoreStatistics {
        state.withLock { StoreStatistics(count: $0.blobs.count, bytes: $0.totalBytes) }
    }

    /// One page of blob metadata in identifier order (see ``ListQuery``).
    public func list(_ query: ListQuery) async throws -> ListPage {
        let cursor = try query.validated(store: name)
        let prefix = Array(query.prefix.utf8)
        // Collect under the lock, order outside it.
        var matching = state.withLock { state in
            state.blobs.values.compactMap { entry -> BlobMetadata? in
                let metadata = entry.metadata
                guard IdentifierOrder.matches(metadata, prefix: prefix, contentTypePrefix: query.contentTypePrefix),
                    IdentifierOrder.isAfter(metadata, cursor: cursor)
                else { return nil }
                return metadata
            }
        }
        matching.sort { IdentifierOrder.ordered($0, $1, sort: query.sort) }
        guard matching.count > query.limit else { return ListPage(items: matching, nextCursor: nil) }
        let items = Array(matching.prefix(query.limit))
        return ListPage(items: items, nextCursor: IdentifierOrder.cursor(after: items[items.count - 1], sort: query.sort).token)
    }

    // MARK: - Changes

    /// Calls `observer` with every change from now on, in commit order, while the change commits
    /// (before its writer is answered): a server forwarding events gets read-your-writes ordering.
    /// The observer must be quick and must not call back into the store.
    package func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Changes committed from now on, in commit order, until the stream is dropped.
    public func changes() -> AsyncStream<BlobChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: BlobChange.self, bufferingPolicy: .unbounded)
        let number = state.withLock { state in
            let number = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[number] = continuation
            return number
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: number) }
        }
        return stream
    }

    /// The current time at the nanosecond resolution a file store records, so that both stores
    /// return dates that survive a round trip through `nanosecondsSince1970`.
    private static func now() -> Date { Date(nanosecondsSince1970: Date().nanosecondsSince1970) }

    // MARK: - Files

    /// Reads from `fd` to the end of the file, 256 KiB at a time.
    private static func readAll(_ fd: FileDescriptor) throws(Errno) -> Data {
        var content = Data()
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let result = buffer.withUnsafeMutableBytes { bytes -> Result<Int, Errno> in
                do throws(Errno) { return .success(try fd.read(into: bytes)) } catch { return .failure(error) }
            }
            let count = try result.get()
            if count == 0 { return content }
            content.append(contentsOf: buffer[0..<count])
        }
    }
}

/// The article's completion-handler API (``ArticleDataStoring``), ordered per instance.
extension InMemoryBlobStore: ArticleDataStoring {}
