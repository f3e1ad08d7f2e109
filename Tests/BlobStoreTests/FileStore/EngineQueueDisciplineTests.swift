import Foundation
import Testing

@testable import BlobStore

/// The index is confined to the store queue, and that is checked, not just said: touching it off the
/// queue, or changing it from an ordinary (non-barrier) read, stops the process.
@Suite struct EngineQueueDisciplineTests {
    @Test func readingTheIndexOffTheQueueStops() async {
        await #expect(processExitsWith: .failure) {
            let root = TemporaryRoot()
            let store = try PersistentDataStore(name: "discipline", root: root.url)
            _ = store.core.index.map
        }
    }

    @Test func changingTheIndexOutsideABarrierStops() async {
        await #expect(processExitsWith: .failure) {
            let root = TemporaryRoot()
            let store = try PersistentDataStore(name: "discipline", root: root.url)
            store.core.queue.sync { store.core.index.replaceMap(.initial) }
        }
    }

    @Test func theIndexIsReadOnTheQueueAndChangedInABarrier() throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(name: "discipline", root: root.url)
        let buckets = store.core.queue.sync { store.core.index.map.buckets.count }
        store.core.queue.sync(flags: .barrier) { store.core.index.replaceMap(.initial) }
        #expect(buckets == 1)
    }
}
