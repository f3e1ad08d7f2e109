import BlobStore
import Foundation
import Testing

@testable import BlobClient

/// The article's API on `RemoteBlobStore`: calls made one after another take effect in that order
/// without waiting for their handlers, as on the embedded stores (``ArticleDataStoring``), checked with
/// the same generator and sequential model as theirs (``ArticleSequences``).
@Suite(.serialized, .enabled(if: DaemonFixture.binary != nil)) struct RemoteArticleOrderTests {
    @Test func randomSequencesMatchTheSequentialModel() async throws {
        let daemon = try DaemonFixture()
        let store = try daemon.client().store("article")
        let mismatch = await ArticleSequences.check(store, iterations: 100, length: 10, seed: 0x0A7D_9EBA)
        #expect(mismatch == nil, "\(mismatch ?? "")")
    }

    @Test func loadRightAfterRemoveOrRemoveAllLoadsNothing() async throws {
        let daemon = try DaemonFixture()
        let store = try daemon.client().store("article")
        for round in 0..<50 {
            try await store.put(Data("v\(round)".utf8), identifier: "a")
            try await store.put(Data("w\(round)".utf8), identifier: "b")
            let (outcomes, _) = await ArticleSequences.run([.remove("a"), .load("a"), .load("b"), .removeAll, .load("b")], on: store)
            let expected: [ArticleOutcome] = [.removed(existed: true), .data(nil), .data(Data("w\(round)".utf8)), .removedAll, .data(nil)]
            #expect(outcomes == expected, "round \(round)")
            if outcomes != expected { return }
        }
    }

    @Test func loadRightAfterStoreLoadsTheNewData() async throws {
        let daemon = try DaemonFixture()
        let store = try daemon.client().store("article")
        for round in 0..<50 {
            let width = UInt32(round + 1)
            let (outcomes, _) = await ArticleSequences.run(
                [.store("a", value: "new\(round)", spin: 0), .load("a"), .storeImage("a", width: width), .loadImage("a")], on: store)
            let expected: [ArticleOutcome] = [.stored("a"), .data(Data("new\(round)".utf8)), .stored("a"), .image(width: width)]
            #expect(outcomes == expected, "round \(round)")
            if outcomes != expected { return }
        }
    }
}
