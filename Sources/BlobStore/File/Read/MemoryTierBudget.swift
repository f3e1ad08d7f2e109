internal import BlobSystem
import Synchronization

/// A byte budget that the memory tiers of several stores draw on together, so that a process
/// serving many stores (blobd) bounds the memory of all their tiers at once rather than per store.
///
/// Give the same instance to each store's ``StoreConfiguration/sharedMemoryTier``. The charged total
/// of every tier on it stays within ``bytes``, except for entries being added at that instant, which
/// evict before they return. Eviction is one CLOCK over all the tiers: a fill that goes over the
/// budget evicts, going round the tiers' shards in turn, the first entry not read since the hand
/// last passed, in whichever store it is (STORAGE.md, "Memory tier").
///
/// Identity is the instance: two budgets of the same size are two budgets.
public final class MemoryTierBudget: Sendable, Hashable {
    /// The most the tiers on this budget may hold together, in charged bytes (0: they hold nothing).
    public var bytes: Int { limit.load(ordering: .relaxed) }

    /// Charged bytes held now by all the tiers on this budget.
    public var chargedBytes: Int { charged.load(ordering: .relaxed) }

    private let limit: Atomic<Int>
    let charged = Atomic<Int>(0)
    /// Whether this budget is one store's own (``StoreConfiguration/memoryTierBytes``, raised by later
    /// opens) rather than one shared on purpose.
    let isPrivate: Bool
    /// The tiers drawing on it, held weakly (a closed store's engine goes away); guarded by the mutex.
    private let members = Locked<[WeakTier]>([])
    /// Where the next eviction looks: it goes round every member's shards.
    private let hand = Atomic<Int>(0)

    private struct WeakTier: Sendable {
        weak var tier: MemoryTier?
    }

    /// A budget of `bytes` charged bytes (negative counts as 0), to share between stores.
    public convenience init(bytes: Int) {
        self.init(bytes: bytes, isPrivate: false)
    }

    init(bytes: Int, isPrivate: Bool) {
        limit = Atomic(max(0, bytes))
        self.isPrivate = isPrivate
    }

    /// Raises the limit to `bytes` if that is more.
    func raise(to bytes: Int) {
        var current = limit.load(ordering: .relaxed)
        while bytes > current {
            let (exchanged, original) = limit.compareExchange(expected: current, desired: bytes, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Adds `tier` to the tiers evictions go round.
    func join(_ tier: MemoryTier) {
        members.withLock { members in
            members.removeAll { $0.tier == nil }
            members.append(WeakTier(tier: tier))
        }
    }

    /// Evicts, going round every member tier's shards, until the charged total is within the limit.
    /// A shard whose hand finds only recently used entries is left after clearing their bits, so an
    /// entry not used since its hand last passed, in any store, goes before one that was. The entry
    /// just filled (`spared`, in `filler`) goes last: a fill must not evict itself while anything
    /// else can go.
    func evictWhileOver(filler: MemoryTier, sparing spared: String) {
        guard charged.load(ordering: .relaxed) > limit.load(ordering: .relaxed) else { return }
        let tiers = members.withLock { $0.compactMap(\.tier) }
        guard !tiers.isEmpty else { return }
        var spared: String? = spared
        var fruitless = 0
        let shards = tiers.count * MemoryTier.shardCount
        while charged.load(ordering: .relaxed) > limit.load(ordering: .relaxed) {
            // Two rounds without an eviction: the first cleared every bit, so nothing else is held.
            if fruitless >= 2 * shards {
                guard spared != nil else { return }
                spared = nil
                fruitless = 0
            }
            let position = hand.wrappingAdd(1, ordering: .relaxed).oldValue & Int.max
            let tier = tiers[position % tiers.count]
            let freed = tier.evictOne(inShard: (position / tiers.count) % MemoryTier.shardCount, sparing: tier === filler ? spared : nil)
            fruitless = freed == 0 ? fruitless + 1 : 0
            charged.wrappingAdd(-freed, ordering: .relaxed)
        }
    }

    /// Whether `lhs` and `rhs` are the same budget.
    public static func == (lhs: MemoryTierBudget, rhs: MemoryTierBudget) -> Bool { lhs === rhs }

    /// Hashes the instance's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
