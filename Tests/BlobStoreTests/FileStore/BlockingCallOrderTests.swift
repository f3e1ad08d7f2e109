import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// The blocking API's changes (``BlobUpload/commit(completion:)``, `remove(_:condition:completion:)`,
/// `removeAllBlobs(completion:)`) are queued inside the call, so changes made one after another
/// without waiting for their completions commit in that order.
@Suite struct BlockingCallOrderTests {
    let root = TemporaryRoot()

    @Test(arguments: [Durability.relaxed, .durable])
    func changesMadeBackToBackCommitInCallOrder(durability: Durability) async throws {
        let store = try PersistentDataStore(name: "blocking-order", root: root.url, configuration: StoreConfiguration(durability: durability))
        for round in 0..<(durability == .relaxed ? 200 : 20) {
            let reports = Locked([String: String]())
            let group = DispatchGroup()
            func upload(_ identifier: String, _ text: String, as key: String) throws {
                let upload = try store.beginUpload(identifier: identifier, options: PutOptions())
                try Array(text.utf8).withUnsafeBytes { try upload.append($0) }
                group.enter()
                upload.commit { result in
                    reports.withLock { $0[key] = (try? result.get()).map { _ in "stored" } ?? "failed" }
                    group.leave()
                }
            }
            func remove(_ identifier: String, as key: String) {
                group.enter()
                store.remove(identifier, condition: .none) { result in
                    reports.withLock { $0[key] = (try? result.get()).map { "removed \($0)" } ?? "failed" }
                    group.leave()
                }
            }
            try upload("a", "v\(round)", as: "1")
            remove("a", as: "2")
            remove("a", as: "3")
            try upload("a", "w\(round)", as: "4")
            try upload("b", "x\(round)", as: "5")
            group.enter()
            store.removeAllBlobs { result in
                reports.withLock { $0["6"] = (try? result.get()).map { "removedAll" } ?? "failed" }
                group.leave()
            }
            try upload("b", "y\(round)", as: "7")
            await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
            let expected = ["1": "stored", "2": "removed true", "3": "removed false", "4": "stored", "5": "stored", "6": "removedAll", "7": "stored"]
            #expect(reports.withLock { $0 } == expected, "round \(round)")
            #expect(try await store.exists("a") == false, "round \(round)")
            #expect(try await store.get("b") == Data("y\(round)".utf8), "round \(round)")
        }
    }
}
