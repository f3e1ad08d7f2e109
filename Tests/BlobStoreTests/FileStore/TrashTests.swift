import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// What waits in `trash/` to be freed (docs/STORAGE.md, "Writing"). Each test holds the store's reclaim
/// queue while it looks, so nothing is freed behind its back.
@Suite struct TrashTests {
    let root = TemporaryRoot()

    func store(_ name: String, durability: Durability) throws -> PersistentDataStore {
        try PersistentDataStore(name: name, root: root.url, configuration: StoreConfiguration(durability: durability))
    }

    func trash(_ store: PersistentDataStore) throws -> [String] {
        try DirectoryStream.entries(of: store.core.paths.trash).map(\.name)
    }

    /// A replacement renames over the old version, which nothing keeps.
    @Test(arguments: [Durability.relaxed, .durable]) func aReplacementLeavesNothingInTrash(durability: Durability) async throws {
        let store = try store("replace", durability: durability)
        try await store.put(Data("old".utf8), identifier: "t")
        let release = hold(store.core.reclaimQueue)
        defer { release() }
        try await store.put(Data("new".utf8), identifier: "t")
        #expect(try trash(store).isEmpty, "the old version waits in trash/")
        #expect(try await store.get("t") == Data("new".utf8))
    }

    /// A remove unlinks its blob's file at once.
    @Test(arguments: [Durability.relaxed, .durable]) func aRemoveUnlinksTheFile(durability: Durability) async throws {
        let store = try store("remove", durability: durability)
        try await store.put(Data("gone soon".utf8), identifier: "r")
        let file = store.core.queue.sync { store.core.locate("r").path }
        #expect(FileManager.default.fileExists(atPath: file))
        let release = hold(store.core.reclaimQueue)
        defer { release() }
        #expect(try await store.remove("r"))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try trash(store).isEmpty, "the removed version waits in trash/")
        #expect(try await store.statistics() == StoreStatistics(count: 0, bytes: 0))
    }

    /// Remove-all moves the whole bucket tree into `trash/` in one step; the reclaim queue frees it later.
    @Test func removeAllMovesTheBucketTreeToTrashAndItIsFreedLater() async throws {
        let store = try store("remove-all", durability: .relaxed)
        for index in 0..<5 { try await store.put(Data("\(index)".utf8), identifier: "a\(index)") }
        let release = hold(store.core.reclaimQueue)
        try await store.removeAll()
        let waiting = try trash(store)
        release()
        #expect(waiting.count == 1 && waiting.allSatisfy { $0.hasPrefix("all-") }, "\(waiting)")
        store.core.reclaimQueue.sync {}
        #expect(try trash(store).isEmpty)
        #expect(try await store.statistics() == StoreStatistics(count: 0, bytes: 0))
    }
}
