import BlobSystem
import Foundation
import Testing

@testable import BlobStore

/// Another blob's file copied under a blob's name (by hand, a restore gone wrong): it is damage at
/// that name, not the blob and not an absence. Reads refuse it with `corrupt` naming both blobs;
/// a remove removes it and a put replaces it; `verify` reports it; the other blob is untouched.
@Suite struct MisplacedFileTests {
    let root = TemporaryRoot()

    func planted() async throws -> (PersistentDataStore, String) {
        let store = try PersistentDataStore(name: "m", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        try await store.put(Data("other".utf8), identifier: "other")
        let (source, target) = store.core.queue.sync { (store.core.locate("other").path, store.core.locate("target").path) }
        try FileManager.default.copyItem(atPath: source, toPath: target)
        return (store, target)
    }

    @Test func readsRefuseAMisplacedFile() async throws {
        let (store, target) = try await planted()
        for (name, read) in [
            ("get", { _ = try await store.get("target") }),
            ("head", { _ = try await store.head("target") }),
            ("exists", { _ = try await store.exists("target") }),
            ("stream", { _ = try await store.stream("target", range: nil, chunkSize: 10) }),
            ("blocking open", { _ = try store.openForReading("target") }),
        ] as [(String, () async throws -> Void)] {
            do {
                try await read()
                Issue.record("\(name) answered for a misplaced file")
            } catch BlobStoreError.corrupt(let path, let reason) {
                #expect(path == target, "\(name)")
                #expect(reason.contains("'target'") && reason.contains("'other'"), "\(name): \(reason)")
            } catch { Issue.record("\(name): expected corrupt, got \(error)") }
        }
        let report = try await store.verify()
        #expect(report.orphaned.map(\.path) == [target])
        #expect(try await store.list(ListQuery()).items.map(\.identifier) == ["other"])
        #expect(try await store.get("other") == Data("other".utf8))
    }

    @Test func removeRemovesAMisplacedFile() async throws {
        let (store, target) = try await planted()
        let otherETag = try await store.head("other").etag
        await #expect(throws: BlobStoreError.preconditionFailed(store: "m", identifier: "target", expected: otherETag, actual: nil)) {
            try await store.remove("target", condition: .ifMatch(otherETag))
        }
        #expect(try await store.remove("target", condition: .none))
        #expect(!FileManager.default.fileExists(atPath: target))
        await #expect(throws: BlobStoreError.notFound(store: "m", identifier: "target")) { _ = try await store.get("target") }
        #expect(try await store.get("other") == Data("other".utf8))
        #expect(try await store.verify().isClean)
    }

    @Test(arguments: [Durability.relaxed, .durable]) func putReplacesAMisplacedFile(durability: Durability) async throws {
        let store = try PersistentDataStore(name: "p", root: root.url, configuration: StoreConfiguration(durability: durability))
        try await store.put(Data("other".utf8), identifier: "other")
        let (source, target) = store.core.queue.sync { (store.core.locate("other").path, store.core.locate("target").path) }
        try FileManager.default.copyItem(atPath: source, toPath: target)
        try await store.put(Data("target".utf8), identifier: "target")
        #expect(try await store.get("target") == Data("target".utf8))
        #expect(try await store.get("other") == Data("other".utf8))
        try FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: source, toPath: target)
        try await store.put(Data("again".utf8), identifier: "target", options: PutOptions(condition: .ifNoneMatch))
        #expect(try await store.get("target") == Data("again".utf8))
        #expect(try await store.verify().isClean)
    }
}
