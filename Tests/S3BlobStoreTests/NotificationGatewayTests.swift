import BlobSystem
import BlobTestSupport
import Dispatch
import Foundation
import Testing

@testable import S3BlobStore

/// Subscriptions against a real radosgw (`.ci/ceph up DIR`, then source `DIR/env`): every member's
/// entry stays when another adds or removes its own, and the gateway's POSTs reach a receiver.
@Suite(.serialized) struct NotificationGatewayTests {
    static func client() throws -> S3Client? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["AWS_ENDPOINT_URL"] != nil, environment["AWS_ACCESS_KEY_ID"] != nil else { return nil }
        return try S3Client(configuration: try S3Configuration.resolve(), bucket: environment["BLOB_S3_BUCKET"] ?? "blobstore-ci")
    }

    static let skipReason = "NotificationGatewayTests: skipped, no AWS_ENDPOINT_URL and AWS_ACCESS_KEY_ID (run .ci/ceph up DIR and source DIR/env)"

    static func unique(_ base: String) -> String { "\(base)-\(UInt32.random(in: 0...UInt32.max))" }

    @Test func membersAddAndRemoveTheirOwnEntriesWithoutTouchingOthers() async throws { try await onOwnThread { try Self().membersAddAndRemoveTheirOwnEntriesWithoutTouchingOthersBlocking() } }

    func membersAddAndRemoveTheirOwnEntriesWithoutTouchingOthersBlocking() throws {
        guard let client = try Self.client() else {
            print(Self.skipReason)
            return
        }
        let names = (0..<3).map { Self.unique("test-member-\($0)") }
        var subscriptions: [S3NotificationSubscription] = []
        defer { for subscription in subscriptions { try? subscription.cancel(client) } }
        for name in names {
            // Nothing listens at port 9: these topics are never delivered to, only configured.
            subscriptions.append(try S3NotificationSubscription.subscribe(client, name: name, pushEndpoint: "http://127.0.0.1:9", keyPrefix: "unused-\(name)/"))
        }
        var ids = Set(try S3NotificationSubscription.entries(client).map(\.id))
        #expect(ids.isSuperset(of: names), "each PUT ?notification added its entry and kept the others")

        // Subscribing again under the same name replaces that member's entry rather than adding one.
        subscriptions[1] = try S3NotificationSubscription.subscribe(client, name: names[1], pushEndpoint: "http://127.0.0.1:9", keyPrefix: "again/")
        let entries = try S3NotificationSubscription.entries(client)
        #expect(entries.filter { $0.id == names[1] }.map(\.keyPrefix) == ["again/"])

        try subscriptions.remove(at: 1).cancel(client)
        ids = Set(try S3NotificationSubscription.entries(client).map(\.id))
        #expect(!ids.contains(names[1]))
        #expect(ids.isSuperset(of: [names[0], names[2]]), "removing one entry by id keeps the others")

        // The bucket still takes writes (an entry naming a deleted topic would make PUTs fail).
        let put = try client.bucket.putObject(key: "notification-test/\(names[1])", payload: .sha256(SHA256.hash("x")))
        _ = try client.send(put, body: .bytes(Array("x".utf8)), context: client.bucket.context("PutObject"))
        _ = try client.send(try client.bucket.deleteObject(key: "notification-test/\(names[1])"), context: client.bucket.context("DeleteObject"))
    }

    @Test func aPutAndADeleteAreDeliveredToTheReceiver() async throws { try await onOwnThread { try Self().aPutAndADeleteAreDeliveredToTheReceiverBlocking() } }

    func aPutAndADeleteAreDeliveredToTheReceiverBlocking() throws {
        guard let client = try Self.client() else {
            print(Self.skipReason)
            return
        }
        let events = Locked<[S3BucketEvent]>([])
        let arrived = DispatchSemaphore(value: 0)
        // Listening before the topic exists: on Ceph 16 a persistent topic whose first delivery is
        // refused was seen to stop delivering altogether.
        let receiver = try S3NotificationReceiver { event in
            events.withLock { $0.append(event) }
            arrived.signal()
        }
        defer { receiver.stop() }
        let name = Self.unique("test-delivery")
        let prefix = "notification-test/\(name)/"
        let subscription = try S3NotificationSubscription.subscribe(
            client, name: name, pushEndpoint: "http://127.0.0.1:\(receiver.address.port)", keyPrefix: prefix)
        defer { try? subscription.cancel(client) }

        let key = prefix + "a b+c%d/é"
        let put = try client.bucket.putObject(key: key, payload: .sha256(SHA256.hash("hello")))
        _ = try client.send(put, body: .bytes(Array("hello".utf8)), context: client.bucket.context("PutObject"))
        _ = try client.send(try client.bucket.putObject(key: "notification-test/outside", payload: .sha256(SHA256.hash(""))), context: client.bucket.context("PutObject"))
        _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject"))
        // The first delivery on a new persistent topic takes up to ~30 s on Ceph 16.
        for _ in 0..<2 { _ = arrived.wait(timeout: .now() + 90) }
        let received = events.withLock { $0 }
        #expect(received.map(\.key) == [key, key], "the raw key, only under the prefix")
        // In either order: the gateway delivers a topic's events concurrently.
        #expect(received.filter(\.isCreation).map(\.objectETag) == ["5d41402abc4b2a76b9719d911017c592"])
        #expect(received.filter(\.isRemoval).count == 1)
        #expect(received.allSatisfy { $0.configurationID == name })
    }
}
