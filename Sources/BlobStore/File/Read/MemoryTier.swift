internal import BlobSystem
import Foundation
import Synchronization

/// The memory tier: the checked content and metadata of small, recently read blobs, so that a read
/// of a hot blob costs no file system call at all (STORAGE.md, "Memory tier").
///
/// **Bound.** Every entry is charged its content plus ``cost(contentBytes:headerLength:)``'s
/// overhead; the charged total stays within the ``budget``, except for the entries being added at
/// that instant, which evict before they return. The budget is the tier's own (the largest
/// ``StoreConfiguration/memoryTierBytes`` any instance on the engine asked for) or one shared with
/// other stores' tiers (``StoreConfiguration/sharedMemoryTier``), whose charged total covers all of
/// them and whose evictions go round all of them. Blobs larger than ``largestBlob`` are never kept.
///
/// **Eviction: CLOCK.** Each entry has one reference bit, set by every hit; a sweeping hand (one per
/// shard, the shards visited in turn) clears set bits and evicts the first entry whose bit is clear.
/// A hit therefore only sets a bit under the lock it already holds for the lookup: true LRU would
/// relink a list on every hit, a write to shared pointers on the hottest path. New entries start
/// with a clear bit, so a blob read once (a scan streaming through) is evicted before any blob read
/// again since the hand last passed.
///
/// **Locks.** The entries are spread over ``shardCount`` shards by a hash of the identifier, each
/// under its own mutex held only for a dictionary lookup or update (never for I/O): readers of
/// different shards never wait for each other. The charged total is one atomic in the budget,
/// touched only by fills, evictions and invalidations, never by hits.
///
/// **Never stale.** A commit's barrier calls ``willChange(_:)`` before it changes any file and
/// ``didChange(_:)`` after; the first drops the entries of the identifiers it changes and bumps
/// their shards' generations. A read that misses takes a ``Ticket`` (its shard's generation)
/// *before* it opens the file; no ticket is handed out while a change of the shard is under way, and
/// a fill is refused unless the generation is still the ticket's. So an entry is only ever filled
/// from a read that opened the file after the last change of that shard finished, with no change
/// started since, and the next change drops it: the tier holds a blob's current version or nothing.
///
/// Owned by the store's engine; every shard is guarded by its own mutex, the totals are atomics.
final class MemoryTier: Sendable {
    /// The largest content kept: up to this size blobd answers from memory anyway (beyond it, it sends
    /// from the file with `sendfile`), and a file read's fixed cost (open, read, close: three calls) is
    /// still the larger part of a read. A larger blob would also push out dozens of small ones.
    static let largestBlob: Int64 = 64 * 1024
    /// Number of independently locked parts.
    static let shardCount = 16
    /// Charged per entry besides its content and encoded header (which stands for the identifier,
    /// content type and user metadata held as strings): the entry's slot, its dictionary slot, the
    /// allocators' headers and rounding of its buffers.
    static let fixedOverhead = MemoryLayout<Entry?>.stride + 128

    /// What a read needs to fill the tier afterwards: the generation of its shard when it started.
    struct Ticket: Sendable {
        fileprivate let shard: Int
        fileprivate let generation: UInt64
    }

    /// The answer of ``lookup(_:)``.
    enum Lookup {
        /// The current version, from memory.
        case hit(BlobMetadata, Data)
        /// Not held; fill with the ticket (`nil`: the shard is being changed, or the tier is off).
        case miss(Ticket?)
    }

    struct Entry {
        let metadata: BlobMetadata
        let content: Data
        /// The version's expiry as its header states it (ns since 1970), judged as the file paths judge it.
        let expiresNanoseconds: Int64?
        let cost: Int
        var referenced = false
    }

    struct Shard {
        /// Identifier to position in `ring`.
        var slots: [IdentifierKey: Int] = [:]
        /// The CLOCK's circle; `nil` marks a free position (listed in `free`).
        var ring: [Entry?] = []
        var free: [Int] = []
        var hand = 0
        var bytes = 0
        /// Bumped at the start and the end of every change touching this shard.
        var generation: UInt64 = 0
        /// Changes under way (between ``MemoryTier/willChange(_:)`` and ``MemoryTier/didChange(_:)``).
        var changing = 0
        var hits = 0
        var misses = 0
        var fills = 0
        var evictions = 0
        var invalidations = 0

        /// Drops `identifier`'s entry; returns the bytes it was charged.
        mutating func drop(_ identifier: String) -> Int {
            guard let slot = slots.removeValue(forKey: IdentifierKey(identifier)), let entry = ring[slot] else { return 0 }
            ring[slot] = nil
            free.append(slot)
            bytes -= entry.cost
            invalidations += 1
            return entry.cost
        }

        /// Drops every entry; returns the bytes they were charged.
        mutating func dropAll() -> Int {
            let freed = bytes
            invalidations += slots.count
            slots = [:]
            ring = []
            free = []
            hand = 0
            bytes = 0
            return freed
        }

        /// One turn of this shard's CLOCK hand: clears the reference bits it passes and evicts the
        /// first entry whose bit was clear already, other than `spared`'s. Returns the bytes freed: 0
        /// when the turn found nothing to evict (a later turn finds the bits it cleared).
        mutating func evictOne(sparing spared: String?) -> Int {
            for _ in 0..<ring.count {
                if hand >= ring.count { hand = 0 }
                let position = hand
                hand += 1
                guard let referenced = ring[position]?.referenced, !(spared.map { ring[position]!.metadata.identifier.isSameIdentifier(as: $0) } ?? false) else { continue }
                if referenced {
                    ring[position]!.referenced = false
                    continue
                }
                let entry = ring[position]!
                ring[position] = nil
                free.append(position)
                slots[IdentifierKey(entry.metadata.identifier)] = nil
                bytes -= entry.cost
                evictions += 1
                return entry.cost
            }
            return 0
        }
    }

    private let shards: [Locked<Shard>]
    /// What this tier is charged against: its own budget, or one shared with other stores' tiers.
    let budget: MemoryTierBudget

    /// A tier charged against `shared`, or against a budget of its own (0 until raised) when `nil`.
    init(shared: MemoryTierBudget? = nil) {
        shards = (0..<MemoryTier.shardCount).map { _ in Locked(Shard()) }
        budget = shared ?? MemoryTierBudget(bytes: 0, isPrivate: true)
        budget.join(self)
    }

    deinit {
        // A shared budget outlives this tier: give back what it was charged.
        budget.charged.wrappingAdd(-shards.reduce(0) { $0 + $1.withLock(\.bytes) }, ordering: .relaxed)
    }

    /// What an entry of `contentBytes` whose blob header encodes in `headerLength` bytes is charged.
    static func cost(contentBytes: Int, headerLength: Int) -> Int {
        contentBytes + headerLength + fixedOverhead
    }

    /// Raises the tier's own budget to `bytes` if that is more (instances on one engine share its
    /// tier); a shared budget is left as it is.
    func raiseBudget(to bytes: Int) {
        if budget.isPrivate { budget.raise(to: bytes) }
    }

    /// Whether anything may be kept.
    var isEnabled: Bool { budget.bytes > 0 }

    private static func shard(of identifier: String) -> Int {
        var hasher = Hasher()
        hasher.combine(identifier)
        return Int(UInt(bitPattern: hasher.finalize()) % UInt(shardCount))
    }

    /// The held version of `identifier`, marking it recently used, or a ticket to fill it after reading
    /// the file. A held version that has expired by `now` (read only for a version with an expiry) is
    /// a miss without a ticket: the file paths then answer "not found", and nothing fills it again.
    /// Never blocks on I/O.
    func lookup(_ identifier: String, now: () -> Int64) -> Lookup {
        guard isEnabled else { return .miss(nil) }
        let index = MemoryTier.shard(of: identifier)
        return shards[index].withLock { shard in
            if let slot = shard.slots[IdentifierKey(identifier)] {
                if let expires = shard.ring[slot]!.expiresNanoseconds, expires <= now() {
                    shard.misses += 1
                    return .miss(nil)
                }
                shard.hits += 1
                if !shard.ring[slot]!.referenced { shard.ring[slot]!.referenced = true }
                let entry = shard.ring[slot]!
                return .hit(entry.metadata, entry.content)
            }
            shard.misses += 1
            return .miss(shard.changing == 0 ? Ticket(shard: index, generation: shard.generation) : nil)
        }
    }

    /// Whether `identifier` is held, without marking it or counting a hit or miss (for tests).
    func holds(_ identifier: String) -> Bool {
        shards[MemoryTier.shard(of: identifier)].withLock { $0.slots[IdentifierKey(identifier)] != nil }
    }

    /// Keeps `content` (checked against `header` by the caller) as the version of the blob `header`
    /// describes, read by a read that took `ticket` before it opened the file. Refused when a change
    /// touched the shard since the ticket, or the blob is too large; evicts by CLOCK while over budget.
    func fill(_ header: BlobHeader, content: Data, ticket: Ticket?) {
        guard let ticket, header.size <= MemoryTier.largestBlob, Int64(content.count) == header.size else { return }
        let cost = MemoryTier.cost(contentBytes: content.count, headerLength: header.encodedLength)
        guard cost <= budget.bytes else { return }
        let entry = Entry(metadata: header.metadata, content: content, expiresNanoseconds: header.expiresNanoseconds, cost: cost)
        let added: Int? = shards[ticket.shard].withLock { shard in
            guard shard.changing == 0, shard.generation == ticket.generation else { return nil }
            var freed = 0
            if let slot = shard.slots[IdentifierKey(entry.metadata.identifier)] {
                // Another read filled it meanwhile, from the same version (no change since the ticket).
                freed = shard.ring[slot]!.cost
                shard.ring[slot] = entry
            } else if let slot = shard.free.popLast() {
                shard.ring[slot] = entry
                shard.slots[IdentifierKey(entry.metadata.identifier)] = slot
            } else {
                shard.ring.append(entry)
                shard.slots[IdentifierKey(entry.metadata.identifier)] = shard.ring.count - 1
            }
            shard.bytes += cost - freed
            shard.fills += 1
            return cost - freed
        }
        guard let added else { return }
        budget.charged.wrappingAdd(added, ordering: .relaxed)
        budget.evictWhileOver(filler: self, sparing: entry.metadata.identifier)
    }

    /// One turn of shard `index`'s CLOCK hand (see ``MemoryTierBudget/evictWhileOver(filler:sparing:)``);
    /// returns the bytes freed, 0 when the turn found nothing to evict.
    func evictOne(inShard index: Int, sparing spared: String?) -> Int {
        shards[index].withLock { $0.evictOne(sparing: spared) }
    }

    // MARK: - Invalidation, in a commit's barrier

    /// The identifiers `mutations` change, by shard; `nil` when one of them removes everything.
    private static func changed(by mutations: [Mutation]) -> [Int: [String]]? {
        var byShard: [Int: [String]] = [:]
        for mutation in mutations {
            switch mutation {
            case .put(let put): byShard[shard(of: put.identifier), default: []].append(put.identifier)
            case .remove(let identifier, _, _): byShard[shard(of: identifier), default: []].append(identifier)
            case .removeAll: return nil
            case .drop(let victims, _):
                for victim in victims { byShard[shard(of: victim.identifier), default: []].append(victim.identifier) }
            }
        }
        return byShard
    }

    /// Before a barrier changes any file: drops the entries `mutations` change and stops fills of
    /// their shards until ``didChange(_:)``.
    func willChange(_ mutations: [Mutation]) {
        change(mutations, starting: true)
    }

    /// After the barrier changed the files: lets fills of those shards in again. Nothing to drop: no
    /// ticket was handed out since ``willChange(_:)``, and older ones fail their generation check.
    func didChange(_ mutations: [Mutation]) {
        change(mutations, starting: false)
    }

    /// Before a barrier that may change any blob (a repair): as ``willChange(_:)`` for every blob.
    func willChangeEverything() { change([.removeAll(durable: false)], starting: true) }

    /// After such a barrier.
    func didChangeEverything() { change([.removeAll(durable: false)], starting: false) }

    private func change(_ mutations: [Mutation], starting: Bool) {
        guard !mutations.isEmpty else { return }
        var freed = 0
        if let byShard = MemoryTier.changed(by: mutations) {
            for (index, identifiers) in byShard {
                freed += shards[index].withLock { shard in
                    guard starting else {
                        shard.changing -= 1
                        return 0
                    }
                    shard.changing += 1
                    shard.generation &+= 1
                    return identifiers.reduce(0) { $0 + shard.drop($1) }
                }
            }
        } else {
            for shard in shards {
                freed += shard.withLock { shard in
                    guard starting else {
                        shard.changing -= 1
                        return 0
                    }
                    shard.changing += 1
                    shard.generation &+= 1
                    return shard.dropAll()
                }
            }
        }
        if freed != 0 { budget.charged.wrappingAdd(-freed, ordering: .relaxed) }
    }

    // MARK: - Figures

    /// Counters and occupancy, summed over the shards (each read under its lock; the sum is not one instant).
    var statistics: MemoryTierStatistics {
        var figures = MemoryTierStatistics(budgetBytes: budget.bytes)
        for shard in shards {
            shard.withLock { shard in
                figures.bytes += shard.bytes
                figures.entries += shard.slots.count
                figures.hits += shard.hits
                figures.misses += shard.misses
                figures.fills += shard.fills
                figures.evictions += shard.evictions
                figures.invalidations += shard.invalidations
            }
        }
        return figures
    }
}
