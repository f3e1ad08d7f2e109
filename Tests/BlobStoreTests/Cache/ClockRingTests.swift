@testable import BlobStore
import Testing

@Suite("The CLOCK ring shared by the file store's catalog and the in-memory store")
struct ClockRingTests {
    /// Where the hand goes from now on: `count` steps.
    private func walk(_ ring: inout ClockRing<String>, _ count: Int) -> [String] {
        (0..<count).map { _ in ring.slots[ring.advance()]! }
    }

    @Test func newEntriesGoJustBehindTheHandSoItReachesThemLast() {
        var ring = ClockRing<String>()
        for name in ["a", "b", "c", "d"] { _ = ring.placeNew(name) }
        // Placed in order behind the hand, which starts at the first.
        #expect(ring.walkOrder.map { ring.slots[$0]! } == ["a", "b", "c", "d"])
        #expect(walk(&ring, 2) == ["a", "b"])
        // The hand is at "c": "e" goes just behind it, so the hand reaches "d", "a" and "b" first.
        _ = ring.placeNew("e")
        #expect(walk(&ring, 5) == ["c", "d", "a", "b", "e"])
    }

    /// A freed slot is reused, yet the new entry still goes just behind the hand: reusing a slot
    /// moves nothing in the walk.
    @Test func aReusedSlotTakesItsPlaceBehindTheHandAndNoEntryMoves() {
        var ring = ClockRing<String>()
        var slot: [String: Int] = [:]
        for name in ["a", "b", "c", "d"] { slot[name] = ring.placeNew(name) }
        #expect(walk(&ring, 2) == ["a", "b"])  // the hand is at "c"
        ring.remove(at: slot["a"]!)  // behind the hand
        let placed = ring.placeNew("x")
        #expect(placed == slot["a"], "the freed slot is reused")
        #expect(walk(&ring, 4) == ["c", "d", "b", "x"])
        // Removing the entry under the hand moves the hand on to the next one.
        #expect(ring.slots[ring.hand] == "c")
        ring.remove(at: slot["c"]!)
        #expect(ring.slots[ring.hand] == "d")
        #expect(ring.count == 3)
        #expect(walk(&ring, 3) == ["d", "b", "x"])
        ring.removeAll()
        #expect(ring.isEmpty)
        #expect(ring.walkOrder.isEmpty)
    }

    /// The eviction pattern: the hand evicts one entry, a new one comes, again and again; never-read
    /// entries leave in the order they came (each reused slot keeps its place in the walk).
    @Test func entriesThatAreNeverReadLeaveInTheOrderTheyCame() {
        var ring = ClockRing<String>()
        var slot: [String: Int] = [:]
        for number in 0..<3 { slot["e\(number)"] = ring.placeNew("e\(number)") }
        var left: [String] = []
        for number in 3..<40 {
            slot["e\(number)"] = ring.placeNew("e\(number)")
            let victim = ring.slots[ring.advance()]!
            ring.remove(at: slot[victim]!)
            left.append(victim)
        }
        #expect(left == (0..<37).map { "e\($0)" })
        #expect(ring.walkOrder.map { ring.slots[$0]! } == ["e37", "e38", "e39"])
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
