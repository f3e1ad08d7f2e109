@testable import BlobStore
import Testing

@Suite("The CLOCK ring shared by the file store's catalog and the in-memory store")
struct ClockRingTests {
    @Test func newEntriesGoJustBehindTheHandSoItReachesThemLast() {
        var ring = ClockRing<String>()
        for name in ["a", "b", "c", "d"] { _ = ring.placeNew(name) }
        // Appended at the hand, each moved it on: the hand is past the end, so the walk starts at "a".
        #expect(ring.slots == ["a", "b", "c", "d"])
        #expect(ring.advance() == 0)
        #expect(ring.advance() == 1)
        // The hand now points at "c" (slot 2): "e" is appended at slot 4, ahead of the hand, so it
        // takes slot 2 and "c" moves to slot 4, where the hand reaches it after "d".
        let placed = ring.placeNew("e")
        #expect(placed.slot == 2)
        #expect(placed.moved?.element == "c")
        #expect(placed.moved?.slot == 4)
        #expect(ring.slots == ["a", "b", "e", "d", "c"])
        let walk = (0..<5).map { _ in ring.slots[ring.advance()]! }
        #expect(walk == ["d", "c", "a", "b", "e"])
    }

    @Test func aFreedSlotIsReusedAndAHoleAtTheHandMovesInsteadOfAnEntry() {
        var ring = ClockRing<String>()
        for name in ["a", "b", "c"] { _ = ring.placeNew(name) }
        _ = ring.advance()  // hand at 1
        ring.remove(at: 1)
        ring.remove(at: 2)
        // Slot 1 or 2 is reused; whichever it is, the entry lands at the hand (1) and no entry moves.
        let placed = ring.placeNew("x")
        #expect(placed.slot == 1)
        #expect(placed.moved == nil)
        #expect(ring.slots == ["a", "x", nil])
        // The remaining hole is reused next, behind the hand again.
        let next = ring.placeNew("y")
        #expect(next.slot == 2)
        #expect(ring.slots == ["a", "x", "y"])
        ring.removeAll()
        #expect(ring.isEmpty)
        #expect(ring.hand == 0)
    }
}
