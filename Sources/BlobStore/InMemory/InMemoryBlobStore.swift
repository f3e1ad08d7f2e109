internal import BlobSystem
import Dispatch
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
/// - The background expiry sweep is a Dispatch timer on a serial queue of its own (never the Swift
///   concurrency pool), made when the first version with an expiry commits; `sweepTimer` owns it,
///   and it holds the store weakly. Each round takes `state`'s lock like a put.
public final class InMemoryBlobStore: BlobStoring {
    /// The store's name.
    public let name: String

    /// One stored version: what `head` returns and the bytes.
    private struct Entry: Sendable {
        var metadata: BlobMetadata
        var content: Data
        /// When it expires, ns since 1970 (``BlobMetadata/expires``).
        var expires: Int64?
        /// Its place in `State.ring`, the CLOCK eviction walks.
        var slot: Int
        /// Read since it was stored or eviction's hand last passed it: its second chance.
        var referenced: Bool

        func isExpired(at now: Int64) -> Bool { expires.map { $0 <= now } ?? false }
    }

    /// Everything mutable; only touched inside `state.withLock`.
    private struct State: Sendable {
        /// Keyed by the identifier's UTF-8 bytes: `String` equality is canonical equivalence, and two
        /// identifiers that differ only in normalisation are two blobs (as two file names are).
        var blobs: [[UInt8]: Entry] = [:]
        /// Sum of the sizes in `blobs`.
        var totalBytes: Int64 = 0
        /// The change feed: numbers changes in commit order, delivers them to subscribers and
        /// observers (``InMemoryBlobStore/observeChanges(_:)``).
        var changes = ChangeFanOut()
        /// Cache mode: the policy, the CLOCK ring of keys (with its hand), the
        /// blobs that have an expiry, and the counters.
        var policy = StorePolicy.unlimited
        var ring = ClockRing<[UInt8]>()
        var expiring: Set<[UInt8]> = []
        var evicted: UInt64 = 0
        var expired: UInt64 = 0
        var peakCount = 0
        var peakBytes: Int64 = 0
        /// Whether the background sweep was started (a version with an expiry committed).
        var sweeping = false

        /// Assigns the next sequence number to `kind` and delivers it to every subscriber and observer.
        mutating func publish(_ kind: BlobChange.Kind, store: String, date: Date, reason: BlobChange.Reason = .requested) {
            changes.publish(kind, store: store, date: date, reason: reason)
        }
    }

    private let state = Locked(State())

    /// The order of the article calls made through this instance (``ArticleDataStoring``).
    public let articleCallOrder = ArticleCallOrder()

    /// The clock expiry is judged by and `modified` dates are taken from.
    private let clock: StoreClock

    /// How often the background sweep looks for expired blobs (wall-clock time; the store's clock is
    /// read at each round).
    private let sweepInterval: DispatchTimeInterval
    /// The background sweep's timer, once started; cancelled when the store goes.
    private let sweepTimer = Locked<(any DispatchSourceTimer)?>(nil)

    /// Creates an empty store; throws ``BlobStoreError/invalidStoreName(name:reason:)`` for a bad name.
    /// `policy` is its cache policy (see ``setPolicy(_:)``); `clock` the time expiry is judged by.
    public convenience init(name: String = "memory", policy: StorePolicy = .unlimited, clock: StoreClock = .system) throws {
        try self.init(name: name, policy: policy, clock: clock, sweepInterval: InMemoryBlobStore.sweepInterval)
    }

    /// A store whose background sweep runs every `sweepInterval` (tests that must tell a put's sweep
    /// from the background one slow it down).
    init(name: String, policy: StorePolicy, clock: StoreClock, sweepInterval: DispatchTimeInterval) throws {
        try StoreName.validate(name)
        self.name = name
        self.clock = clock
        self.sweepInterval = sweepInterval
        state.withLock { $0.policy = policy }
    }

    deinit {
        sweepTimer.withLock { $0?.cancel() }
        for continuation in state.withLock({ $0.changes.takeSubscribers() }) { continuation.finish() }
    }

    /// Number of live change subscribers (for tests).
    var subscriberCount: Int { state.withLock { $0.changes.subscriberCount } }

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
        var startSweeping = false
        let committed = try state.withLock { (state) throws(BlobStoreError) -> BlobMetadata in
            let now = self.now()
            let nanoseconds = now.nanosecondsSince1970
            let stored = state.blobs[key]
            // An expired version is absent to the condition and to `created`.
            let current = stored.flatMap { $0.isExpired(at: nanoseconds) ? nil : $0 }
            try Self.check(options.condition, current: current?.metadata.etag, store: name, identifier: id)
            let expires = Self.expiry(options.expiry, from: nanoseconds, policy: state.policy)
            let metadata = BlobMetadata(
                identifier: id, size: Int64(content.count), contentType: inspected.contentType, etag: etag,
                created: current?.metadata.created ?? now, modified: now,
                userMetadata: options.userMetadata, image: inspected.image, expires: expires.map { Date(nanosecondsSince1970: $0) })
            state.totalBytes += metadata.size - (stored?.metadata.size ?? 0)
            let slot = stored?.slot ?? Self.placeNew(key, in: &state)
            state.blobs[key] = Entry(metadata: metadata, content: content, expires: expires, slot: slot, referenced: false)
            if expires != nil { state.expiring.insert(key) } else { state.expiring.remove(key) }
            if expires != nil && !state.sweeping {
                state.sweeping = true
                startSweeping = true
            }
            state.publish(.put(metadata), store: name, date: now)
            Self.sweep(&state, store: name, now: now, maximum: Self.sweepBatch)
            Self.evict(&state, store: name, now: now)
            state.peakCount = max(state.peakCount, state.blobs.count)
            state.peakBytes = max(state.peakBytes, state.totalBytes)
            return metadata
        }
        if startSweeping { startSweepTimer() }
        return committed
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
            let now = self.now()
            let current = state.blobs[key].flatMap { $0.isExpired(at: now.nanosecondsSince1970) ? nil : $0 }
            try Self.check(condition, current: current?.metadata.etag, store: name, identifier: identifier)
            guard current != nil else { return false }
            Self.drop(key, from: &state)
            state.publish(.removed(identifier: identifier), store: name, date: now)
            return true
        }
    }

    /// Removes every blob; a ``BlobChange/Kind/removedAll`` event is posted even if it was empty.
    public func removeAll() async throws {
        state.withLock { state in
            state.blobs.removeAll()
            state.totalBytes = 0
            state.ring.removeAll()
            state.expiring = []
            state.publish(.removedAll, store: name, date: self.now())
        }
    }

    // MARK: - Reading

    /// The current version of `identifier`, or `notFound`.
    private func entry(_ identifier: String) throws(BlobStoreError) -> Entry {
        try BlobIdentifier.validate(identifier)
        let key = Array(identifier.utf8)
        let now = clock.nowNanoseconds()
        let found = state.withLock { state -> Entry? in
            guard let entry = state.blobs[key], !entry.isExpired(at: now) else { return nil }
            if !entry.referenced { state.blobs[key]!.referenced = true }
            return entry
        }
        guard let entry = found else { throw .notFound(store: name, identifier: identifier) }
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
        let now = clock.nowNanoseconds()
        return state.withLock { state in state.blobs[key].map { !$0.isExpired(at: now) } ?? false }
    }

    /// Count and total size of the blobs.
    public func statistics() async throws -> StoreStatistics {
        let now = clock.nowNanoseconds()
        return state.withLock { state in
            var statistics = StoreStatistics(count: state.blobs.count, bytes: state.totalBytes)
            for key in state.expiring {
                guard let entry = state.blobs[key], entry.isExpired(at: now) else { continue }
                statistics.count -= 1
                statistics.bytes -= entry.metadata.size
            }
            return statistics
        }
    }

    /// One page of blob metadata in identifier order (see ``ListQuery``).
    public func list(_ query: ListQuery) async throws -> ListPage {
        let cursor = try query.validated(store: name)
        let prefix = Array(query.prefix.utf8)
        // Collect under the lock, order outside it.
        let now = clock.nowNanoseconds()
        var matching = state.withLock { state in
            state.blobs.values.compactMap { entry -> BlobMetadata? in
                if entry.isExpired(at: now) { return nil }
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
        state.withLock { $0.changes.observe(observer) }
    }

    /// Changes committed from now on, in commit order, until the stream is dropped.
    public func changes() -> AsyncStream<BlobChange> {
        ChangeFanOut.stream { continuation in
            state.withLock { $0.changes.add(continuation) }
        } unregister: { [weak self] number in
            self?.state.withLock { $0.changes.remove(subscriber: number) }
        }
    }

    /// The current time at the nanosecond resolution a file store records, so that both stores
    /// return dates that survive a round trip through `nanosecondsSince1970`.
    private func now() -> Date { Date(nanosecondsSince1970: clock.nowNanoseconds()) }

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

// MARK: - Cache mode

/// Cache mode, all in memory (STORAGE.md, "Cache mode"): the same policy, expiry and CLOCK eviction as
/// the file store, applied under the store's lock as each put commits, so the store never goes over
/// its limits (no overshoot: there is no disk to wait for).
extension InMemoryBlobStore {
    /// Expired blobs removed per put at most (the sweep's bounded round).
    static let sweepBatch = 256

    /// The store's cache policy.
    public func policy() async throws -> StorePolicy {
        state.withLock { $0.policy }
    }

    /// Sets the store's cache policy and applies it at once: blobs are evicted down to the new limits
    /// before this returns. A negative limit or a time to live that is not positive throws `EINVAL`.
    public func setPolicy(_ policy: StorePolicy) async throws {
        if (policy.maximumBytes ?? 0) < 0 || (policy.maximumCount ?? 0) < 0 || (policy.defaultTimeToLive ?? .seconds(1)) <= .zero {
            throw BlobStoreError.io(operation: "set policy (a negative limit or a time to live that is not positive)", path: name, errno: Errno(rawValue: EINVAL))
        }
        state.withLock { state in
            state.policy = policy
            Self.evict(&state, store: name, now: now())
        }
    }

    /// Usage against the policy's limits, and the evicted and expired counts, for metrics.
    public func cacheCounters() async throws -> CacheCounters {
        let statistics = try await statistics()
        return state.withLock { state in
            CacheCounters(
                policy: state.policy, count: statistics.count, bytes: statistics.bytes, evicted: state.evicted, expired: state.expired,
                peakCount: state.peakCount, peakBytes: state.peakBytes, waitingPuts: 0)
        }
    }

    /// How often the background sweep runs once the store has held a version with an expiry.
    static let sweepInterval = DispatchTimeInterval.seconds(1)

    /// Removes every expired blob now, each with a ``BlobChange/Reason/expired`` removal (puts also
    /// remove up to ``sweepBatch`` each as they commit, and so does the background sweep every second).
    public func sweepExpired() async {
        state.withLock { state in _ = Self.sweep(&state, store: name, now: now(), maximum: Int.max) }
    }

    /// Starts the background sweep (once): without it, the expired blobs of a store that no put
    /// reaches would stay in memory, and their `expired` removals would never be published. A
    /// serial queue of the store's own runs it, so no round ever occupies a thread of the Swift
    /// concurrency pool, and two rounds never overlap.
    private func startSweepTimer() {
        let queue = DispatchQueue(label: "blobstore.memory.\(name).sweep", qos: .utility)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + sweepInterval, repeating: sweepInterval)
        timer.setEventHandler { [weak self] in self?.sweepRound(on: queue) }
        sweepTimer.withLock { $0 = timer }
        timer.resume()
    }

    /// One background round: removes up to ``sweepBatch`` expired blobs, and goes on in another
    /// round at once if there were that many (letting puts take the lock in between). On the sweep's queue.
    func sweepRound(on queue: DispatchQueue) {
        let removed = state.withLock { state in Self.sweep(&state, store: name, now: now(), maximum: Self.sweepBatch) }
        if removed == Self.sweepBatch { queue.async { [weak self] in self?.sweepRound(on: queue) } }
    }

    /// When a put at `now` (ns since 1970) expires under `expiry` and `policy`.
    private static func expiry(_ expiry: BlobExpiry, from now: Int64, policy: StorePolicy) -> Int64? {
        switch expiry {
        case .never: return nil
        case .at(let date): return date.nanosecondsSince1970
        case .after(let duration): return now.addingReportingOverflow(duration.clampedNanoseconds).partialValue
        case .storeDefault: return policy.defaultTimeToLive.map { now.addingReportingOverflow($0.clampedNanoseconds).partialValue }
        }
    }

    /// A ring slot for a new blob, just behind the hand (``ClockRing/placeNew(_:)``).
    private static func placeNew(_ key: [UInt8], in state: inout State) -> Int {
        state.ring.placeNew(key)
    }

    /// Takes `key`'s blob out of the blobs, the totals, the ring and the expiring set.
    private static func drop(_ key: [UInt8], from state: inout State) {
        guard let entry = state.blobs.removeValue(forKey: key) else { return }
        state.totalBytes -= entry.metadata.size
        state.ring.remove(at: entry.slot)
        state.expiring.remove(key)
    }

    /// Removes up to `maximum` expired blobs, publishing each as an `.expired` removal; returns how many.
    @discardableResult
    private static func sweep(_ state: inout State, store: String, now: Date, maximum: Int) -> Int {
        guard !state.expiring.isEmpty else { return 0 }
        let nanoseconds = now.nanosecondsSince1970
        var found: [[UInt8]] = []
        for key in state.expiring where state.blobs[key]?.isExpired(at: nanoseconds) == true {
            found.append(key)
            if found.count == maximum { break }
        }
        for key in found {
            let identifier = state.blobs[key]!.metadata.identifier
            drop(key, from: &state)
            state.expired += 1
            state.publish(.removed(identifier: identifier), store: store, date: now, reason: .expired)
        }
        return found.count
    }

    /// CLOCK eviction down to the policy's limits: the hand passes over (and clears) a referenced
    /// blob, and evicts the first it finds unreferenced, publishing an `.evicted` removal.
    private static func evict(_ state: inout State, store: String, now: Date) {
        func over(_ state: State) -> Bool {
            if let limit = state.policy.maximumBytes, state.totalBytes > limit { return true }
            if let limit = state.policy.maximumCount, state.blobs.count > limit { return true }
            return false
        }
        while over(state), !state.ring.isEmpty {
            let position = state.ring.advance()
            guard let key = state.ring.slots[position], let entry = state.blobs[key] else { continue }
            if entry.referenced {
                state.blobs[key]!.referenced = false
                continue
            }
            drop(key, from: &state)
            state.evicted += 1
            state.publish(.removed(identifier: entry.metadata.identifier), store: store, date: now, reason: .evicted)
        }
    }
}

/// The article's completion-handler API (``ArticleDataStoring``), ordered per instance.
extension InMemoryBlobStore: ArticleDataStoring {}
