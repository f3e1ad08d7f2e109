import BlobStore
import BlobSystem
import Foundation
import S3BlobStore

/// A store that reads conditionally like ``S3BlobStore``, over an ``InMemoryBlobStore``: the
/// object ETag of a version is its XXH64 ETag and modification time, and it counts what it answered
/// (`200` with content, `304`), as a gateway's log would. Another writer is ``memory`` itself.
final class ReadCacheFakeStore: ServedBackend, S3ConditionalReading {
    let memory: InMemoryBlobStore
    private struct State {
        var fetched = 0
        var notModified = 0
        var opened = 0
        /// The next fetch sends this many bytes flipped (damage in flight).
        var damageNextFetch = false
        /// Every call fails as an unreachable object store would.
        var unavailable = false
        /// Changes are not passed to observers (a writer elsewhere whose change is not reported).
        var unreported = false
        /// Fetches give readers that check the content themselves (as ``S3BlobStore``'s do).
        var readerChecks = false
        /// Runs once a fetch has read the object store's state, before it answers (time passing
        /// before the answer arrives, or a change made meanwhile).
        var onAnswer: (@Sendable () -> Void)?
        /// Runs at the first read of a fetched version's content (time the transfer takes).
        var onTransfer: (@Sendable () -> Void)?
    }
    private let state = Locked(State())

    init(name: String = "photos") throws { memory = try InMemoryBlobStore(name: name) }

    var fetched: Int { state.withLock { $0.fetched } }
    var notModified: Int { state.withLock { $0.notModified } }
    /// Reads through ``open(_:)`` (what the cache falls back to).
    var opened: Int { state.withLock { $0.opened } }
    func damageNextFetch() { state.withLock { $0.damageNextFetch = true } }
    func setUnavailable(_ value: Bool) { state.withLock { $0.unavailable = value } }
    func setUnreported(_ value: Bool) { state.withLock { $0.unreported = value } }
    func setReaderChecks(_ value: Bool) { state.withLock { $0.readerChecks = value } }
    func setOnAnswer(_ hook: (@Sendable () -> Void)?) { state.withLock { $0.onAnswer = hook } }
    func setOnTransfer(_ hook: (@Sendable () -> Void)?) { state.withLock { $0.onTransfer = hook } }

    /// Another writer's put, made at once on the calling thread (the in-memory store commits in
    /// its completion), reported to observers unless ``setUnreported(_:)`` says otherwise.
    @discardableResult
    func writeNow(_ identifier: String, _ text: String, options: PutOptions = PutOptions()) throws -> BlobMetadata {
        let upload = try memory.startUpload(identifier: identifier, options: options)
        try Array(text.utf8).withUnsafeBytes { try upload.append($0) }
        let result = Locked<Result<BlobMetadata, any Error>?>(nil)
        upload.commit { outcome in result.withLock { $0 = outcome } }
        return try result.withLock { $0! }.get()
    }

    static func objectETag(_ metadata: BlobMetadata) -> String {
        "\(metadata.etag.rawValue)-\(Int64(metadata.modified.timeIntervalSince1970 * 1e9))"
    }

    private func checkAvailable() throws {
        if state.withLock({ $0.unavailable }) {
            throw BlobStoreError.backendUnavailable(store: name, backend: "s3://fake at http://127.0.0.1:1", reason: "connection refused")
        }
    }

    func fetch(_ identifier: String, ifNoneMatch objectETag: String?) throws -> S3Fetch {
        try checkAvailable()
        let blob = try memory.open(identifier)
        let etag = Self.objectETag(blob.metadata)
        let onAnswer = state.withLock { $0.onAnswer }
        if etag == objectETag {
            state.withLock { $0.notModified += 1 }
            onAnswer?()
            return .notModified
        }
        var content = try blob.read(0..<blob.metadata.size)
        let damage = state.withLock { state in
            state.fetched += 1
            defer { state.damageNextFetch = false }
            return state.damageNextFetch
        }
        if damage, !content.isEmpty { content[content.startIndex] ^= 0xFF }
        var reader: any S3ContentReader = state.withLock { $0.readerChecks } ? CheckingDataReader(content, expected: blob.metadata.etag) : DataReader(content)
        if let onTransfer = state.withLock({ $0.onTransfer }) { reader = HookedReader(reader, onFirstRead: onTransfer) }
        onAnswer?()
        return .fetched(S3StoredVersion(metadata: blob.metadata, objectETag: etag), reader)
    }

    var name: String { memory.name }
    func openIfReady(_ identifier: String) -> (any ServedBlob)? { nil }
    func open(_ identifier: String) throws -> any ServedBlob {
        try checkAvailable()
        state.withLock { $0.opened += 1 }
        return try memory.open(identifier)
    }
    func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        try memory.startUpload(identifier: identifier, options: options)
    }
    func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool { try await memory.remove(identifier, condition: condition) }
    func removeAll() async throws { try await memory.removeAll() }
    func list(_ query: ListQuery) async throws -> ListPage { try await memory.list(query) }
    func verify(repair: Bool) async throws -> VerificationReport { try await memory.verify(repair: repair) }
    func statistics() async throws -> StoreStatistics { try await memory.statistics() }
    func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) {
        memory.observeChanges { [state] change in
            if !state.withLock({ $0.unreported }) { observer(change) }
        }
    }
    func policy() async throws -> StorePolicy { try await memory.policy() }
    func setPolicy(_ policy: StorePolicy) async throws { try await memory.setPolicy(policy) }
}

/// Content in memory, read in pieces of at most 1,000 bytes (so a fill takes several reads).
final class DataReader: S3ContentReader, @unchecked Sendable {
    private let data: Data
    private var offset = 0
    init(_ data: Data) { self.data = data }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, data.count - offset, 1000)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
        offset += count
        return count
    }
    func close() { offset = data.count }
}

/// Another reader that runs `onFirstRead` before its first read (a transfer that takes time).
final class HookedReader: S3ContentReader, @unchecked Sendable {
    private let base: any S3ContentReader
    private var onFirstRead: (@Sendable () -> Void)?
    init(_ base: any S3ContentReader, onFirstRead: @escaping @Sendable () -> Void) {
        self.base = base
        self.onFirstRead = onFirstRead
    }
    var checksContent: Bool { base.checksContent }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let hook = onFirstRead {
            onFirstRead = nil
            hook()
        }
        return try base.read(into: buffer)
    }
    func close() { base.close() }
}

/// Content in memory, read in pieces of at most 1,000 bytes and checked against `expected` as
/// ``S3BlobStore``'s reader checks: the piece holding the last byte comes only once the whole
/// content has matched, else the read throws `corrupt`.
final class CheckingDataReader: S3ContentReader, @unchecked Sendable {
    private let data: Data
    private let expected: ETag
    private var offset = 0
    private var hasher = XXH64()
    init(_ data: Data, expected: ETag) {
        self.data = data
        self.expected = expected
    }
    var checksContent: Bool { true }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, data.count - offset, 1000)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
        if offset + count == data.count, ETag(checksum: hasher.finalize()) != expected {
            offset = data.count
            throw BlobStoreError.corrupt(path: "s3://fake/object", reason: "the content's XXH64 is not \(expected)")
        }
        data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
        offset += count
        return count
    }
    func close() { offset = data.count }
}

/// A folder under the temp directory, removed by ``remove()``.
struct ReadCacheFolder {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "read-cache-\(UUID().uuidString)"
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A clock the test moves (monotonic nanoseconds).
final class ReadCacheClock: @unchecked Sendable {
    private let now = Locked<UInt64>(1_000_000_000)
    func advance(seconds: Double) { now.withLock { $0 += UInt64(seconds * 1e9) } }
    var read: @Sendable () -> UInt64 { { [self] in now.withLock { $0 } } }
}

/// A wall clock the test moves (what blobs' expiry times are compared with).
final class ReadCacheWallClock: Sendable {
    private let now = Locked<Date>(Date())
    func advance(seconds: Double) { now.withLock { $0 += seconds } }
    var read: @Sendable () -> Date { { [self] in now.withLock { $0 } } }
}

/// Log lines, kept for checks.
final class ReadCacheLog: Sendable {
    private let lines = Locked<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var sink: @Sendable (String) -> Void { { [self] line in lines.withLock { $0.append(line) } } }
}
