import BlobSystem
import BlobStore
import BlobTestSupport
import Foundation
@testable import S3BlobStore
import Testing

/// The fleet's change feed into a store (``S3RemoteChangeReceiving``), against the gateway.
@Suite(.timeLimit(.minutes(1))) struct StoreRemoteChangeTests {
    @Test func anotherMembersChangesArePublishedAndOwnEchoesDropped() async throws {
        guard let writer = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let reader = S3BlobStore(name: writer.name, client: writer.client, layout: writer.layout)
        let own = writer.changes()
        let remote = reader.changes()
        let put = try await writer.put(Data("v1".utf8), identifier: "x")
        let objectETag = try #require(writer.hint("x")?.objectETag)

        // The bucket's notification of the writer's own put reaches both members.
        await BlockingThreads.runDetached { writer.receiveRemoteChange(.stored(identifier: "x", objectETag: objectETag)) }
        await BlockingThreads.runDetached { reader.receiveRemoteChange(.stored(identifier: "x", objectETag: objectETag)) }
        // A notification of a version already replaced publishes nothing (the HEAD finds another ETag).
        await BlockingThreads.runDetached { reader.receiveRemoteChange(.stored(identifier: "x", objectETag: "0123456789abcdef0123456789abcdef")) }
        try await writer.remove("x")
        await BlockingThreads.runDetached { writer.receiveRemoteChange(.removed(identifier: "x")) }
        await BlockingThreads.runDetached { reader.receiveRemoteChange(.removed(identifier: "x")) }
        try await writer.put(Data("v2".utf8), identifier: "y")

        var ownIterator = own.makeAsyncIterator()
        let ownKinds = [await ownIterator.next()?.kind, await ownIterator.next()?.kind, await ownIterator.next()?.kind]
        #expect(ownKinds[0] == .put(put))
        #expect(ownKinds[1] == .removed(identifier: "x"), "the echo of its own put was dropped")
        if case .put(let metadata)? = ownKinds[2] { #expect(metadata.identifier == "y", "the echo of its own remove was dropped") } else {
            Issue.record("expected the put of y, got \(String(describing: ownKinds[2]))")
        }
        var remoteIterator = remote.makeAsyncIterator()
        let first = await remoteIterator.next()
        let second = await remoteIterator.next()
        #expect(first?.kind == .put(put) && first?.sequence == 1)
        #expect(second?.kind == .removed(identifier: "x") && second?.sequence == 2)
    }
}

extension StoreRemoteChangeTests {
    @Test func twoPutsOfTheSameContentHaveTwoEchoesBothDropped() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let changes = store.changes()
        try await store.put(Data("same".utf8), identifier: "z")
        try await store.put(Data("same".utf8), identifier: "z")
        let objectETag = try #require(store.hint("z")?.objectETag)
        for _ in 0..<2 { await BlockingThreads.runDetached { store.receiveRemoteChange(.stored(identifier: "z", objectETag: objectETag)) } }
        try await store.put(Data("next".utf8), identifier: "w")
        var iterator = changes.makeAsyncIterator()
        var identifiers: [String] = []
        for _ in 0..<3 {
            if case .put(let metadata)? = await iterator.next()?.kind { identifiers.append(metadata.identifier) }
        }
        #expect(identifiers == ["z", "z", "w"])
    }
}

extension BlockingThreads {
    /// Runs a blocking call off the cooperative pool and waits for it.
    static func runDetached(_ body: @escaping @Sendable () -> Void) async {
        _ = try? await run(body)
    }
}
