import BlobProtocol
import BlobStore
import Foundation
import Testing

@testable import BlobClient

/// A store's cache policy through the client (`GET`/`PUT /v1/stores/{store}`), and the changes the
/// client reads back from the daemon's events of removals by policy.
@Suite(.serialized, .enabled(if: DaemonFixture.binary != nil)) struct PolicyClientTests {
    @Test func aStoresPolicyIsSetAndReadThroughTheClient() async throws {
        let daemon = try DaemonFixture()
        let client = daemon.client()
        let policy = StorePolicy(maximumBytes: 1 << 30, maximumCount: nil, defaultTimeToLive: .milliseconds(1500))
        let created = try await client.createStore("photos", policy: policy)
        #expect(created == StoreStatus(name: "photos", statistics: StoreStatistics(count: 0, bytes: 0), policy: policy))
        let store = try client.store("photos")
        #expect(try await store.policy() == policy)
        try await store.put(Data("abc".utf8), identifier: "a", options: PutOptions(expiry: .after(.seconds(3600))))
        try await store.setPolicy(StorePolicy(maximumCount: 10))
        #expect(try await client.storeStatus("photos") == StoreStatus(name: "photos", statistics: StoreStatistics(count: 1, bytes: 3), policy: StorePolicy(maximumCount: 10)))
        // Only the members an update sets change.
        let updated = try await client.updateStore("photos", PolicyJSON.Update(defaultTimeToLive: .some(.seconds(60))))
        #expect(updated.policy == StorePolicy(maximumCount: 10, defaultTimeToLive: .seconds(60)))
        let listed = try await client.storesWithPolicies()
        #expect(listed.map(\.summary.name) == ["photos"] && listed.first?.policy == updated.policy)

        await #expect(throws: BlobStoreError.notFound(store: "nosuch", identifier: "")) { try await client.store("nosuch").policy() }
        do {
            _ = try await client.createStore("refused", policy: StorePolicy(maximumCount: 0))
            Issue.record("a count limit of 0 was accepted")
        } catch let error as BlobClientError {
            guard case .http(400, "invalid_policy", let message) = error else { throw error }
            #expect(message.hasPrefix("maxCount must be a whole number of blobs from 1"))
        }
        #expect(try await client.stores().map(\.name) == ["photos"], "the refused store was not created")
    }

    @Test func aPutSendsItsExpiryAsHeaders() async throws {
        let daemon = try DaemonFixture()
        let store = try daemon.client().store("s")
        // Beyond the protocol's longest time to live: the daemon refuses the header it received.
        do {
            try await store.put(Data("x".utf8), identifier: "a", options: PutOptions(expiry: .after(.seconds(5_000_000_000))))
            Issue.record("the expiry was not sent")
        } catch let error as BlobClientError {
            guard case .http(400, "bad_request", let message) = error else { throw error }
            #expect(message.hasPrefix("Cache-Control: max-age must be a whole number of seconds"), "\(message)")
        }
        for expiry in [BlobExpiry.never, .at(Date(timeIntervalSinceNow: 3600)), .after(.seconds(60)), .storeDefault] {
            try await store.put(Data("x".utf8), identifier: "a", options: PutOptions(expiry: expiry))
        }
    }
}
