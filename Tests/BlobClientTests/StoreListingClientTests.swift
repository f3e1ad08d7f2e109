import BlobStore
import Foundation
import Testing

@testable import BlobClient

/// `GET /v1/stores` reports totals only for the stores blobd has open, and names the holder of a
/// store another process has open: the client passes both on.
@Suite(.serialized, .enabled(if: DaemonFixture.binary != nil)) struct StoreListingClientTests {
    @Test func storesWithoutTotalsAndHeldStores() async throws {
        let daemon = try DaemonFixture()
        try await daemon.client().store("kept").put(Data("abc".utf8), identifier: "a", options: PutOptions())
        // A restarted daemon has opened no store yet.
        daemon.stop()
        try daemon.start()
        // Another process (this test) holds a store.
        let held = try PersistentDataStore(name: "held", root: URL(fileURLWithPath: daemon.root))
        let client = daemon.client()
        let listed = try await client.stores()
        #expect(listed.map(\.name) == ["held", "kept"])
        #expect(listed.allSatisfy { $0.statistics == nil })
        #expect(listed.first?.heldBy == "pid \(getpid())")
        #expect(listed.last?.heldBy == nil)
        // A store's own totals: the daemon is made to open it first.
        #expect(try await client.store("kept").statistics() == StoreStatistics(count: 1, bytes: 3))
        #expect(try await client.stores().last?.statistics == StoreStatistics(count: 1, bytes: 3))
        await #expect(throws: BlobStoreError.self) { try await client.store("held").statistics() }
        _ = held
    }
}
