/// The ring of entries that a CLOCK eviction's hand walks: the file store's cache catalog and the
/// in-memory store each keep one (their recency marks live elsewhere).
///
/// A circular list threaded through stable slots: a new entry is linked in just behind the hand, so
/// the hand reaches it after every entry already there, in the order they came, and no entry ever
/// moves to make room. (Putting it in a free slot or swapping it with the entry at the hand, as an
/// array of slots would, moves some entry past others the hand has not reached yet: a blob put
/// later could then be evicted before an older one that was never read.) Each operation is O(1).
///
/// A value type: its owner keeps it under the owner's lock.
struct ClockRing<Element> {
    /// The entries by slot; `nil` where an entry was removed (a slot keeps its entry while it lives).
    private(set) var slots: [Element?] = []
    /// The walk's order: the slot after and before each live slot.
    private var next: [Int] = []
    private var previous: [Int] = []
    /// Slots to reuse.
    private var free: [Int] = []
    /// The slot the hand looks at next; meaningless while the ring is empty.
    private(set) var hand = 0
    /// The live entries.
    private(set) var count = 0

    /// Whether the ring holds no entry.
    var isEmpty: Bool { count == 0 }

    /// Links a new entry in just behind the hand, the last place it reaches; returns its slot, which
    /// stays its slot until it is removed.
    mutating func placeNew(_ element: Element) -> Int {
        let at: Int
        if let reused = free.popLast() {
            at = reused
            slots[at] = element
        } else {
            at = slots.count
            slots.append(element)
            next.append(at)
            previous.append(at)
        }
        if count == 0 {
            next[at] = at
            previous[at] = at
            hand = at
        } else {
            let last = previous[hand]
            next[last] = at
            previous[at] = last
            next[at] = hand
            previous[hand] = at
        }
        count += 1
        return at
    }

    /// Replaces the entry in `slot` (its place in the walk stays).
    mutating func replace(at slot: Int, with element: Element) {
        slots[slot] = element
    }

    /// Unlinks the entry in `slot` and frees the slot for a later entry; the hand, if it was on it,
    /// moves on to the next.
    mutating func remove(at slot: Int) {
        guard slots[slot] != nil else { return }
        slots[slot] = nil
        count -= 1
        if count > 0 {
            let (before, after) = (previous[slot], next[slot])
            next[before] = after
            previous[after] = before
            if hand == slot { hand = after }
        }
        free.append(slot)
    }

    /// The slot under the hand, moving the hand on to the next entry. The ring must not be empty.
    mutating func advance() -> Int {
        precondition(count > 0, "advance on an empty ring")
        let at = hand
        hand = next[at]
        return at
    }

    /// The live slots in the order the hand will reach them, starting at the hand.
    var walkOrder: [Int] {
        var order: [Int] = []
        order.reserveCapacity(count)
        var at = hand
        for _ in 0..<count {
            order.append(at)
            at = next[at]
        }
        return order
    }

    /// Empties the ring.
    mutating func removeAll() {
        slots = []
        next = []
        previous = []
        free = []
        hand = 0
        count = 0
    }
}

extension ClockRing: Sendable where Element: Sendable {}
