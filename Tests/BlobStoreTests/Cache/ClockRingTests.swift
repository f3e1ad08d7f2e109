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

@Suite("The cache catalog's CLOCK order")
struct CacheCatalogOrderTests {
    private func header(_ identifier: String) -> BlobHeader {
        BlobHeader(
            identifier: identifier, size: 1, checksum: 7, createdNanoseconds: 1, modifiedNanoseconds: 2, contentType: "text/plain",
            userMetadata: [:], image: nil, expiresNanoseconds: nil)
    }

    /// The scan places what it finds bucket by bucket; a put that commits before the scan reaches the
    /// older blobs' buckets is still new, and goes after all of them (STORAGE.md, "Cache mode": a new
    /// blob is the last the hand reaches). Before, it stood where the scan was, and a store over its
    /// limit evicted the blob just put (`EvictionCrashTests` saw an acknowledged put vanish).
    @Test func aBlobPutWhileTheScanRunsIsEvictedAfterEveryBlobTheScanFinds() {
        let catalog = CacheCatalog()
        #expect(catalog.activate())
        catalog.stored(header("new"))  // a commit before the scan read any bucket
        catalog.scanned(header("old1"))
        catalog.stored(header("newer"))  // a commit between two buckets
        catalog.scanned(header("old2"))
        catalog.scanned(header("new"))  // the scan finds the put's file too: still new
        catalog.stored(header("gone"))
        catalog.removed("gone")
        catalog.markReady()
        #expect(catalog.usage?.count == 4)
        let recency = RecencyBits()
        let order = catalog.victims(downTo: (nil, 0), recency: recency, maximum: 10).map(\.identifier)
        #expect(order == ["old1", "old2", "new", "newer"])
        // Down to one: the last blob put is the one left.
        #expect(catalog.victims(downTo: (nil, 1), recency: recency, maximum: 10).map(\.identifier) == ["old1", "old2", "new"])
    }
}
