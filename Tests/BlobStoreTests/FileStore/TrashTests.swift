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
}
