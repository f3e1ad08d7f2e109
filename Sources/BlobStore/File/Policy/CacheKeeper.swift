internal import BlobSystem
import Dispatch
import Foundation

/// Cache mode for one store (STORAGE.md, "Cache mode"): keeps the policy with the store, settles
/// each put's expiry, and on its own serial queue (never the Swift concurrency pool) scans the store
/// into the ``CacheCatalog``, evicts by CLOCK while the store is over a limit and sweeps expired
/// blobs — each removal a ``Mutation/drop(_:reason:)`` committed through the group commit like a
/// remove. Puts that would take the store past its limits plus a slack wait (parked, not blocking
/// any thread) until eviction has made room (``admit(_:proceed:)``).
///
/// Owned by the store's engine. `state` (its mutex) holds the policy, the admission accounts, the
/// parked puts and the counters; the catalog guards itself; the queue runs the scan, eviction and sweeps.
final class CacheKeeper: Sendable {
    /// Blobs removed per drop batch: bounds the work of one eviction or sweep round.
    static let batchSize = 256
    /// How often the sweep looks for expired blobs (wall-clock time; a test clock is read each time).
    static let sweepInterval = DispatchTimeInterval.seconds(1)

    private struct Parked {
        var size: Int64
        var proceed: @Sendable () -> Void
    }

    private struct State {
        var policy = StorePolicy.unlimited
        /// Whether the store is in cache mode (it has a policy file): the catalog is kept and swept.
        var tracking = false
        var pendingBytes: Int64 = 0
        var pendingCount = 0
        var parked: [Parked] = []
        var evicting = false
        var scanFailure: (any Error)?
        var waitingForReady: [@Sendable (Result<Void, any Error>) -> Void] = []
        var timer: (any DispatchSourceTimer)?
    }

    let marks: ReadMarks
    var clock: StoreClock { marks.clock }
    let catalog: CacheCatalog
    private let paths: StorePaths
    private let readOnly: Bool
    private let state = Locked(State())
    /// Serialises policy writes (a policy file is written whole; two writers must not interleave).
    private let policyWrites = Locked(())
    /// The cache-mode queue: scan, eviction, sweeps.
    let queue: DispatchQueue
    /// Set by the engine once its parts exist: the store queue, the index, and the commit entry.
    private let engine = Locked<Engine?>(nil)

    struct Engine: Sendable {
        var storeQueue: DispatchQueue
        var index: BucketIndex
        var submit: @Sendable (Mutation, @escaping @Sendable (Result<MutationOutcome, any Error>) -> Void) -> Void
    }

    init(paths: StorePaths, label: String, clock: StoreClock, readOnly: Bool) {
        self.paths = paths
        self.readOnly = readOnly
        marks = ReadMarks(clock: clock)
        catalog = CacheCatalog()
        queue = DispatchQueue(label: label + ".cache", qos: .utility)
    }

    deinit {
        state.withLock { $0.timer?.cancel() }
    }

    // MARK: - Policy

    /// Reads the stored policy; a writing engine given `configured` stores it if it differs, and starts
    /// cache mode when the store has a policy file. Blocking (opening a store).
    func open(configured: StorePolicy?, engine parts: Engine) throws {
        engine.withLock { $0 = parts }
        let stored = try PolicyFile.read(paths)
        state.withLock {
            $0.policy = stored ?? .unlimited
            $0.tracking = stored != nil
        }
        apply(stored ?? .unlimited)
        if readOnly { return }
        if let configured, configured != stored {
            try setPolicy(configured)
        } else if stored != nil {
            startTracking()
        }
    }

    /// The policy in force. A read-only engine reads the file again (the writer may have changed it).
    func policy() throws -> StorePolicy {
        if readOnly { return try PolicyFile.read(paths) ?? .unlimited }
        return state.withLock { $0.policy }
    }

    /// Stores `policy` with the store (durably) and applies it at once: eviction runs down to the new
    /// limits in the background. Blocking.
    func setPolicy(_ policy: StorePolicy) throws {
        try validate(policy)
        try policyWrites.withLock { _ in
            try PolicyFile.write(policy, paths: paths)
            state.withLock {
                $0.policy = policy
                $0.tracking = true
            }
            apply(policy)
        }
        startTracking()
        kick()
    }

    private func validate(_ policy: StorePolicy) throws {
        func refuse(_ reason: String) -> BlobStoreError { .io(operation: "set policy (\(reason))", path: paths.policy, errno: Errno(rawValue: EINVAL)) }
        if let bytes = policy.maximumBytes, bytes < 0 { throw refuse("maximumBytes \(bytes) is negative") }
        if let count = policy.maximumCount, count < 0 { throw refuse("maximumCount \(count) is negative") }
        if let ttl = policy.defaultTimeToLive, ttl <= .zero { throw refuse("defaultTimeToLive \(ttl) is not positive") }
    }

    private func apply(_ policy: StorePolicy) {
        catalog.setLimits(bytes: policy.maximumBytes, count: policy.maximumCount)
        marks.marking.store(policy.hasLimits, ordering: .relaxed)
    }

    /// When a version put at `modified` (ns since 1970) expires under `expiry`, or `nil`. A put that
    /// gets an expiry starts cache mode first (so the sweep will find it, also after a restart). Blocking.
    func expiry(of expiry: BlobExpiry, from modified: Int64) throws -> Int64? {
        let result: Int64?
        switch expiry {
        case .never: result = nil
        case .at(let date): result = date.nanosecondsSince1970
        case .after(let duration): result = modified.addingReportingOverflow(duration.clampedNanoseconds).partialValue
        case .storeDefault:
            result = state.withLock { $0.policy.defaultTimeToLive }.map { modified.addingReportingOverflow($0.clampedNanoseconds).partialValue }
        }
        if result != nil, !readOnly, !state.withLock({ $0.tracking }) { try enterCacheMode() }
        return result
    }

    /// Writes the policy in force (unlimited) to the policy file if there is none yet: from then on
    /// the store is in cache mode. Blocking.
    private func enterCacheMode() throws {
        try policyWrites.withLock { _ in
            guard !state.withLock({ $0.tracking }) else { return }
            try PolicyFile.write(state.withLock { $0.policy }, paths: paths)
            state.withLock { $0.tracking = true }
        }
        startTracking()
    }

    // MARK: - Catalog scan

    /// Starts keeping the catalog and scans the store into it in the background (once).
    private func startTracking() {
        guard catalog.activate() else { return }
        catalog.onOverLimit { [weak self] in self?.kick() }
        queue.async { [weak self] in self?.scan() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + CacheKeeper.sweepInterval, repeating: CacheKeeper.sweepInterval)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            sweepRound()
            // A round that ended on a failed drop is tried again here, once a second at most.
            if catalog.isOverLimits { kick() }
        }
        state.withLock { $0.timer = timer }
        timer.resume()
    }

    /// Reads every bucket's headers into the catalog, one bucket per read item on the store queue (a
    /// bucket's barrier-made changes reach the catalog either before the item or after it; recording a
    /// version twice is harmless). On the cache queue.
    private func scan() {
        guard let parts = engine.withLock({ $0 }) else { return }
        var position = 0
        do {
            while true {
                let more = try parts.storeQueue.sync { () throws -> Bool in
                    let buckets = parts.index.map.buckets
                    guard position < buckets.count else { return false }
                    let folder = paths.bucket(buckets[position].number)
                    for entry in try BucketFolder.entries(of: folder) {
                        if case .present(let header) = try BlobReader.existing(at: folder + "/" + entry.fileName) { catalog.scanned(header) }
                    }
                    return true
                }
                guard more else { break }
                position += 1
            }
            catalog.markReady()
            let waiting = state.withLock { state in
                defer { state.waitingForReady = [] }
                return state.waitingForReady
            }
            for resume in waiting { resume(.success(())) }
            evictRound()
        } catch {
            let waiting = state.withLock { state in
                state.scanFailure = error
                defer { state.waitingForReady = [] }
                return state.waitingForReady
            }
            for resume in waiting { resume(.failure(error)) }
        }
    }

    /// Waits until the catalog is complete (cache mode only).
    private func ready() async throws {
        if catalog.usage != nil { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let now: Result<Void, any Error>? = state.withLock { state in
                if catalog.usage != nil { return .success(()) }
                if let failure = state.scanFailure { return .failure(failure) }
                state.waitingForReady.append { continuation.resume(with: $0) }
                return nil
            }
            if let now { continuation.resume(with: now) }
        }
    }

    /// Whether statistics come from here (a writing engine in cache mode).
    var answersStatistics: Bool { !readOnly && catalog.isActive }

    /// Count and bytes of the unexpired blobs, from the catalog (once the scan is done).
    func statistics() async throws -> StoreStatistics {
        try await ready()
        guard let usage = catalog.usage else { return StoreStatistics(count: 0, bytes: 0) }
        let expired = catalog.expiredUsage(at: clock.nowNanoseconds())
        return StoreStatistics(count: usage.count - expired.count, bytes: usage.bytes - expired.bytes)
    }

    // MARK: - Eviction and sweeps

    /// Asks for an eviction round (cheap; rounds do not pile up).
    func kick() {
        let start = state.withLock { state -> Bool in
            guard !state.evicting else { return false }
            state.evicting = true
            return true
        }
        if start { queue.async { [weak self] in self?.evictRound() } }
    }

    /// Evicts in batches until the store is within its limits, releasing parked puts as room appears.
    /// A drop that fails (the engine is gone, or its commit failed) ends the round without another
    /// one: retrying at once would spin this queue on the same victims; the next commit that leaves
    /// the store over its limits, or the sweep's next tick, asks again. On the cache queue.
    private func evictRound() {
        var failed = false
        defer {
            state.withLock { $0.evicting = false }
            releaseParked()
            if !failed, catalog.isOverLimits { kick() }
        }
        while true {
            let policy = state.withLock { $0.policy }
            guard policy.hasLimits else { return }
            let victims = catalog.victims(downTo: (policy.maximumBytes, policy.maximumCount), recency: marks.recency, maximum: CacheKeeper.batchSize)
            if victims.isEmpty { return }
            guard drop(victims, reason: .evicted) != nil else {
                failed = true
                return
            }
            releaseParked()
        }
    }

    /// One sweep round: removes up to ``batchSize`` expired blobs, and goes on in another round if
    /// there were more. On the cache queue.
    func sweepRound() {
        guard catalog.hasExpiring else { return }
        let victims = catalog.expired(at: clock.nowNanoseconds(), maximum: CacheKeeper.batchSize)
        guard !victims.isEmpty else { return }
        guard drop(victims, reason: .expired) != nil else { return }
        releaseParked()
        if victims.count == CacheKeeper.batchSize { queue.async { [weak self] in self?.sweepRound() } }
    }

    /// Commits one drop of all `victims` and waits for it; returns how many were removed, or `nil`
    /// when the drop failed or the engine is gone (nothing was removed). Submitted
    /// inline: this queue's thread may block, so when no batch is being committed it commits the
    /// drop itself, sparing the commit thread (and the puts it would hold up) the hand-off.
    private func drop(_ victims: [CacheVictim], reason: BlobChange.Reason) -> Int? {
        guard let parts = engine.withLock({ $0 }) else { return nil }
        let done = DispatchSemaphore(value: 0)
        let removed = Locked<Int?>(nil)
        parts.submit(.drop(victims, reason: reason)) { result in
            if case .success(.dropped(let identifiers, _)) = result { removed.withLock { $0 = identifiers.count } }
            done.signal()
        }
        done.wait()
        return removed.withLock { $0 }
    }

    // MARK: - Admission

    /// A put's place in the admission accounts, given back when its commit completes.
    struct Ticket: Sendable {
        var size: Int64
        /// Whether it counts in the pending accounts.
        var counted: Bool
        /// Whether `proceed` runs on the thread that asked (not later, for a parked put).
        var immediate: Bool
    }

    /// Runs `proceed` (which submits a put of `size` content bytes) now if the store has room for it
    /// within its limits plus slack, counting it as pending until ``settled(_:)``; otherwise parks it
    /// until eviction or completed puts make room. Puts are not accounted while the policy has no
    /// limit or the scan is not done. Returns the ticket the completion must settle.
    func admit(size: Int64, proceed: @escaping @Sendable (Ticket) -> Void) {
        // Set exactly while the policy has a limit: a store without one pays one atomic load per put.
        guard marks.marking.load(ordering: .relaxed) else { return proceed(Ticket(size: size, counted: false, immediate: true)) }
        let admitted = state.withLock { state -> Bool? in
            // Read under the mutex: a put that settles meanwhile has its commit in `usage` already.
            guard state.policy.hasLimits, let usage = catalog.usage else { return false }
            guard state.parked.isEmpty, fits(size, usage: usage, state: state) else {
                state.parked.append(Parked(size: size, proceed: { proceed(Ticket(size: size, counted: true, immediate: false)) }))
                return nil
            }
            state.pendingBytes += size
            state.pendingCount += 1
            return true
        }
        guard let counted = admitted else {
            kick()
            return
        }
        proceed(Ticket(size: size, counted: counted, immediate: true))
    }

    /// The slack over each limit that admitted puts may take the store to: an eighth of the limit
    /// (at least one blob for the count).
    static func ceiling(_ policy: StorePolicy) -> (bytes: Int64?, count: Int?) {
        (policy.maximumBytes.map { $0 + $0 / 8 }, policy.maximumCount.map { $0 + max(1, $0 / 8) })
    }

    /// Whether a put of `size` fits: with what is committed and pending it stays within the ceiling,
    /// or nothing is pending and eviction has caught up (a blob larger than the slack goes alone).
    private func fits(_ size: Int64, usage: (count: Int, bytes: Int64), state: State) -> Bool {
        let ceiling = CacheKeeper.ceiling(state.policy)
        let bytesFit = ceiling.bytes.map { usage.bytes + state.pendingBytes + size <= $0 } ?? true
        let countFits = ceiling.count.map { usage.count + state.pendingCount + 1 <= $0 } ?? true
        if bytesFit && countFits { return true }
        let withinLimits = (state.policy.maximumBytes.map { usage.bytes <= $0 } ?? true) && (state.policy.maximumCount.map { usage.count <= $0 } ?? true)
        return state.pendingCount == 0 && withinLimits
    }

    /// A put admitted with `ticket` completed (committed or failed).
    func settled(_ ticket: Ticket) {
        guard ticket.counted else { return }
        state.withLock { state in
            state.pendingBytes -= ticket.size
            state.pendingCount -= 1
        }
        releaseParked()
    }

    /// Admits parked puts, in order, while they fit.
    private func releaseParked() {
        let released = state.withLock { state -> [@Sendable () -> Void] in
            var released: [@Sendable () -> Void] = []
            guard let usage = catalog.usage else { return released }
            while let first = state.parked.first, !state.policy.hasLimits || fits(first.size, usage: usage, state: state) {
                state.parked.removeFirst()
                state.pendingBytes += first.size
                state.pendingCount += 1
                released.append(first.proceed)
            }
            return released
        }
        for proceed in released { proceed() }
    }

    // MARK: - Counters

    /// What cache mode has done, for metrics (``CacheCounters``).
    func counters() async throws -> CacheCounters {
        let policy = try policy()
        var usage: StoreStatistics?
        if answersStatistics { usage = try await statistics() }
        let peak = catalog.peak
        let removals = catalog.removals
        return state.withLock { state in
            CacheCounters(
                policy: policy, count: usage?.count, bytes: usage?.bytes, evicted: removals.evicted, expired: removals.expired,
                peakCount: peak.count, peakBytes: peak.bytes, waitingPuts: state.parked.count)
        }
    }

    /// Runs one sweep round now and waits for it (tests advance a test clock, then sweep).
    func sweepNow() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.sweepRound()
                continuation.resume()
            }
        }
    }

    /// Waits until the scan is done and no eviction round runs or is due (tests).
    func settle() async throws {
        try await ready()
        while true {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async { continuation.resume() }
            }
            let busy = state.withLock { $0.evicting || !$0.parked.isEmpty } || catalog.isOverLimits
            if !busy { return }
        }
    }
}
