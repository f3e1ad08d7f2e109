/// The ring of slots that a CLOCK eviction's hand walks, with holes where entries left: the file
/// store's cache catalog and the in-memory store each keep one (their recency marks live elsewhere).
///
/// A value type: its owner keeps it under the owner's lock.
struct ClockRing<Element> {
    /// The slots; `nil` where an entry was removed.
    private(set) var slots: [Element?] = []
    private var free: Set<Int> = []
    /// The slot the hand looks at next.
    private(set) var hand = 0

    /// Whether no slot was ever taken (or all were cleared).
    var isEmpty: Bool { slots.isEmpty }

    /// Puts a new entry just behind the hand, the last place it reaches: a free or appended slot
    /// ahead of the hand swaps with the slot at the hand. Returns the new entry's slot, and the
    /// entry that moved to make room with its new slot.
    mutating func placeNew(_ element: Element) -> (slot: Int, moved: (element: Element, slot: Int)?) {
        var at: Int
        var moved: (element: Element, slot: Int)?
        if let reused = free.popFirst() {
            at = reused
            slots[at] = element
        } else {
            at = slots.count
            slots.append(element)
        }
        if hand >= slots.count { hand = 0 }
        if at > hand {
            let displaced = slots[hand]
            slots[hand] = element
            slots[at] = displaced
            if let displaced {
                moved = (displaced, at)
            } else {
                free.remove(hand)
                free.insert(at)
            }
            at = hand
        }
        if at == hand { hand += 1 }
        return (at, moved)
    }

    /// Replaces the entry in `slot`.
    mutating func replace(at slot: Int, with element: Element) {
        slots[slot] = element
    }

    /// Empties `slot` for a later entry.
    mutating func remove(at slot: Int) {
        slots[slot] = nil
        free.insert(slot)
    }

    /// The slot under the hand, moving the hand on by one (around the end).
    mutating func advance() -> Int {
        if hand >= slots.count { hand = 0 }
        defer { hand += 1 }
        return hand
    }

    /// Empties the ring.
    mutating func removeAll() {
        slots = []
        free = []
        hand = 0
    }
}

extension ClockRing: Sendable where Element: Sendable {}
