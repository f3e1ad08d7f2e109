internal import BlobSystem

/// A blob that eviction or the expiry sweep picked: which version, so that the barrier that
/// removes it can tell that no put replaced it meanwhile.
struct CacheVictim: Sendable, Hashable {
    var identifier: String
    var checksum: UInt64
    var modifiedNanoseconds: Int64
}

/// What cache mode knows of every blob of a store, in memory: size, version and expiry, in a ring
/// that eviction's CLOCK hand walks (recency is in ``RecencyBits``). Built by a scan when cache
/// mode starts (``CacheKeeper``), then kept by the barriers that commit changes (``ChangeApplier``),
/// so its count and bytes are the store's once the scan is done.
///
/// Owned by the store's engine; its own mutex guards everything. Updated inside commit barriers and
/// by the scan's read items (which barriers exclude), read by the eviction queue.
final class CacheCatalog: Sendable {
    private struct Slot {
        var identifier: String
        var size: Int64
        var checksum: UInt64
        var modified: Int64
        var expires: Int64?
        var recencySlot: Int
    }

    private struct State {
        /// Whether barriers keep the catalog (cache mode started).
        var active = false
        /// Whether the scan has finished: only then are `count` and `bytes` the store's.
        var ready = false
        var ring = ClockRing<Slot>()
        var position: [IdentifierKey: Int] = [:]
        var count = 0
        var bytes: Int64 = 0
        /// The blobs that have an expiry, and when.
        var expiring: [IdentifierKey: Int64] = [:]
        /// Called (outside the mutex) after a change that leaves the store over `limits`.
        var limits: (bytes: Int64?, count: Int?) = (nil, nil)
        /// The most blobs and bytes held at once since the scan finished.
        var peakCount = 0
        var peakBytes: Int64 = 0
        /// Blobs removed by eviction and by the sweep since the store was opened.
        var evicted: UInt64 = 0
        var expired: UInt64 = 0
        /// Blobs that commits added while the scan ran, in commit order: ``markReady()`` moves them
        /// behind everything the scan found.
        var arrivals: [IdentifierKey] = []
    }

    private let state = Locked(State())
    /// ``State/active``, readable without the mutex: a store not in cache mode pays one atomic load per commit.
    private let activeFlag = AtomicFlag(false)
    /// Called when a change leaves the store over its limits (the eviction queue's kick).
    private let overLimit = Locked<(@Sendable () -> Void)?>(nil)

    /// Sets what to call when a change leaves the store over its limits.
    func onOverLimit(_ action: @escaping @Sendable () -> Void) { overLimit.withLock { $0 = action } }

    /// Starts keeping the catalog from the next barrier on (the scan then fills in what is stored);
    /// `false` when it was kept already.
    func activate() -> Bool {
        state.withLock { state in
            defer {
                state.active = true
                activeFlag.store(true, ordering: .relaxed)
            }
            return !state.active
        }
    }

    /// Whether barriers keep it.
    var isActive: Bool { state.withLock { $0.active } }

    /// The scan has seen every bucket: count and bytes are now the store's. The blobs that commits
    /// added during the scan go behind every blob it found, in the order they came, so that they are
    /// the last the hand reaches, as every new blob is: the scan placed its finds in bucket order,
    /// and a put that committed before the scan reached an old blob's bucket would otherwise stand
    /// ahead of that blob and be evicted before it.
    func markReady() {
        state.withLock { state in
            if !state.arrivals.isEmpty { Self.moveArrivalsLast(&state) }
            state.ready = true
            state.peakCount = state.count
            state.peakBytes = state.bytes
        }
    }

    /// The most blobs and bytes held at once since the scan finished.
    var peak: (count: Int, bytes: Int64) { state.withLock { ($0.peakCount, $0.peakBytes) } }

    /// Count and bytes, when known (``markReady()``).
    var usage: (count: Int, bytes: Int64)? {
        state.withLock { $0.ready ? ($0.count, $0.bytes) : nil }
    }

    /// The limits that ``onOverLimit(_:)`` watches.
    func setLimits(bytes: Int64?, count: Int?) { state.withLock { $0.limits = (bytes, count) } }

    /// Rebuilds the ring: the blobs the scan found, in the order it placed them, then the arrivals.
    /// The hand starts from the first.
    private static func moveArrivalsLast(_ state: inout State) {
        let arrived = Set(state.arrivals)
        var ring = ClockRing<Slot>()
        var position: [IdentifierKey: Int] = [:]
        func place(_ slot: Slot) { position[IdentifierKey(slot.identifier)] = ring.placeNew(slot) }
        for at in state.ring.walkOrder {
            guard let slot = state.ring.slots[at], !arrived.contains(IdentifierKey(slot.identifier)) else { continue }
            place(slot)
        }
        for key in state.arrivals where position[key] == nil {
            // Gone again before the scan ended: nothing to place.
            guard let at = state.position[key], let slot = state.ring.slots[at] else { continue }
            place(slot)
        }
        state.ring = ring
        state.position = position
        state.arrivals = []
    }

    /// A version that a commit stored; replaces what it knew of the identifier.
    func stored(_ header: BlobHeader) { record(header, byScan: false) }

    /// A version that the scan found in its bucket; replaces what it knew of the identifier.
    func scanned(_ header: BlobHeader) { record(header, byScan: true) }

    private func record(_ header: BlobHeader, byScan: Bool) {
        guard activeFlag.load(ordering: .relaxed) else { return }
        let over = state.withLock { state -> Bool in
            guard state.active else { return false }
            let slot = Slot(
                identifier: header.identifier, size: header.size, checksum: header.checksum, modified: header.modifiedNanoseconds,
                expires: header.expiresNanoseconds, recencySlot: RecencyBits.slot(of: header.identifier))
            if let at = state.position[IdentifierKey(header.identifier)] {
                state.bytes += header.size - state.ring.slots[at]!.size
                state.ring.replace(at: at, with: slot)
            } else {
                // A new blob goes just behind the hand, the last place it reaches.
                state.position[IdentifierKey(header.identifier)] = state.ring.placeNew(slot)
                state.count += 1
                state.bytes += header.size
                if !state.ready && !byScan { state.arrivals.append(IdentifierKey(header.identifier)) }
            }
            state.expiring[IdentifierKey(header.identifier)] = header.expiresNanoseconds
            if state.ready {
                state.peakCount = max(state.peakCount, state.count)
                state.peakBytes = max(state.peakBytes, state.bytes)
            }
            return Self.over(state)
        }
        if over { overLimit.withLock { $0 }?() }
    }

    /// A blob removed (by any reason).
    func removed(_ identifier: String) {
        state.withLock { state in
            guard state.active, let at = state.position.removeValue(forKey: IdentifierKey(identifier)) else { return }
            state.count -= 1
            state.bytes -= state.ring.slots[at]!.size
            state.ring.remove(at: at)
            state.expiring[IdentifierKey(identifier)] = nil
        }
    }

    /// Counts a blob that a drop removed, in its barrier: before the removal's change is published,
    /// so that whoever saw the change finds it counted.
    func dropped(reason: BlobChange.Reason) {
        state.withLock { state in
            if reason == .expired { state.expired += 1 } else { state.evicted += 1 }
        }
    }

    /// Blobs removed by eviction and by the sweep since the store was opened.
    var removals: (evicted: UInt64, expired: UInt64) { state.withLock { ($0.evicted, $0.expired) } }

    /// The size of `victim`'s version if the catalog holds exactly it (and, given `now`, it has
    /// expired by then), else `nil`: a drop's check, in its barrier, that no put replaced the victim.
    func holds(_ victim: CacheVictim, expiredAt now: Int64?) -> Int64? {
        state.withLock { state in
            guard let at = state.position[IdentifierKey(victim.identifier)], let slot = state.ring.slots[at],
                slot.checksum == victim.checksum, slot.modified == victim.modifiedNanoseconds
            else { return nil }
            if let now {
                guard let expires = slot.expires, expires <= now else { return nil }
            }
            return slot.size
        }
    }

    /// Forgets `victim`'s version if the catalog still holds exactly it (a drop found it no longer
    /// stored; a newer version the catalog learnt meanwhile stays).
    func forget(_ victim: CacheVictim) {
        let current = state.withLock { state -> Bool in
            guard let at = state.position[IdentifierKey(victim.identifier)], let slot = state.ring.slots[at] else { return false }
            return slot.checksum == victim.checksum && slot.modified == victim.modifiedNanoseconds
        }
        if current { removed(victim.identifier) }
    }

    /// Every blob removed.
    func clear() {
        state.withLock { state in
            guard state.active else { return }
            state.ring.removeAll()
            state.position = [:]
            state.count = 0
            state.bytes = 0
            state.expiring = [:]
            state.arrivals = []
        }
    }

    private static func over(_ state: State) -> Bool {
        guard state.ready else { return false }
        if let bytes = state.limits.bytes, state.bytes > bytes { return true }
        if let count = state.limits.count, state.count > count { return true }
        return false
    }

    /// Whether the store is over its limits (known only once ready).
    var isOverLimits: Bool { state.withLock { Self.over($0) } }

    /// Of every this many blobs held, an eviction that finds the store over its limits takes one more
    /// than it must (``victims(downTo:recency:maximum:)``).
    static let headroomDivisor = 64

    /// CLOCK: the blobs to evict to bring the store down to `bytes` and `count`, at most `maximum`.
    /// The hand passes over a blob whose recency bit is set (clearing it: its second chance) and
    /// picks the first whose bit is clear; blobs already expired are picked first by the sweep, not here.
    ///
    /// When the store is over its limits it also picks one blob more for every ``headroomDivisor``
    /// blobs it holds: otherwise a store at its limit under a stream of puts would evict one blob
    /// per put, each eviction a commit of its own that the puts wait behind; with the headroom the
    /// next puts find room and eviction runs in batches. Nothing when the store is within its limits.
    func victims(downTo limits: (bytes: Int64?, count: Int?), recency: RecencyBits, maximum: Int) -> [CacheVictim] {
        state.withLock { state in
            guard state.ready, !state.ring.isEmpty else { return [] }
            var bytes = state.bytes
            var count = state.count
            var picked: [CacheVictim] = []
            var passes = 0
            // Two full turns at most: after the first every bit the hand met is clear.
            let budget = state.ring.count * 2 + 1
            func overLimits() -> Bool {
                if let limit = limits.bytes, bytes > limit { return true }
                if let limit = limits.count, count > limit { return true }
                return false
            }
            guard overLimits() else { return [] }
            var headroom = state.count / Self.headroomDivisor
            while overLimits() || headroom > 0, picked.count < maximum, passes < budget {
                passes += 1
                guard let slot = state.ring.slots[state.ring.advance()] else { continue }
                if recency.takeMark(slot.recencySlot) { continue }
                if !overLimits() { headroom -= 1 }
                picked.append(CacheVictim(identifier: slot.identifier, checksum: slot.checksum, modifiedNanoseconds: slot.modified))
                bytes -= slot.size
                count -= 1
            }
            return picked
        }
    }

    /// Up to `maximum` blobs expired at `now` (ns since 1970).
    func expired(at now: Int64, maximum: Int) -> [CacheVictim] {
        state.withLock { state in
            var found: [CacheVictim] = []
            for (key, expires) in state.expiring where expires <= now {
                guard let at = state.position[key], let slot = state.ring.slots[at] else { continue }
                found.append(CacheVictim(identifier: key.identifier, checksum: slot.checksum, modifiedNanoseconds: slot.modified))
                if found.count == maximum { break }
            }
            return found
        }
    }

    /// Count and bytes of the blobs expired at `now` but not removed yet (statistics leave them out).
    func expiredUsage(at now: Int64) -> (count: Int, bytes: Int64) {
        state.withLock { state in
            var count = 0
            var bytes: Int64 = 0
            for (key, expires) in state.expiring where expires <= now {
                guard let at = state.position[key], let slot = state.ring.slots[at] else { continue }
                count += 1
                bytes += slot.size
            }
            return (count, bytes)
        }
    }

    /// Whether some blob has an expiry at all (the sweep's timer has work).
    var hasExpiring: Bool { state.withLock { !$0.expiring.isEmpty } }
}
