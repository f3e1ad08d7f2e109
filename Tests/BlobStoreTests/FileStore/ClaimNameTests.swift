import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// Relaxed puts that may create their blob claim the name with `renameat2(RENAME_NOREPLACE)` before
/// looking anything up (`StoreCore.claimsNameFirst`); only a name that exists costs a lookup. These
/// check that the shortcut changes how much is read, never what is stored.
@Suite struct ClaimNameTests {
    let root = TemporaryRoot()

    func store(_ name: String, durability: Durability = .relaxed, capacity: Int = 8192) throws -> PersistentDataStore {
        try PersistentDataStore(name: name, root: root.url, configuration: StoreConfiguration(durability: durability, bucketCapacity: capacity))
    }

    func lookups(_ store: PersistentDataStore) -> Int { store.core.commitLookups.load(ordering: .relaxed) }

    /// The path of `identifier`'s file under the store's current bucket map.
    func path(of identifier: String, in store: PersistentDataStore) -> String {
        store.core.queue.sync { store.core.locate(identifier).path }
    }

    @Test func newBlobsAreStoredWithoutALookup() async throws {
        let store = try store("new", capacity: 16)  // small buckets: the run also splits
        let before = lookups(store)
        var expected: [String: Data] = [:]
        for index in 0..<60 {
            let data = Data("blob \(index)".utf8)
            let metadata = try await store.put(data, identifier: "id-\(index)")
            #expect(metadata.created == metadata.modified)
            expected["id-\(index)"] = data
        }
        #expect(lookups(store) == before, "a relaxed put of a new blob read what was stored")
        for (identifier, data) in expected { #expect(try await store.get(identifier) == data) }
        let stored = try await store.statistics()
        #expect(stored.count == 60)
        #expect(stored.bytes == Int64(expected.values.map(\.count).reduce(0, +)))
        #expect(try await store.listAll().map(\.identifier).sorted() == expected.keys.sorted())
    }

    @Test func anExistingNameIsLookedUpAndReplacedKeepingItsCreationTime() async throws {
        let store = try store("overwrite")
        let first = try await store.put(Data("first".utf8), identifier: "k")
        try await Task.sleep(for: .milliseconds(5))
        let before = lookups(store)
        let second = try await store.put(Data("second, longer".utf8), identifier: "k")
        #expect(lookups(store) > before, "the replacement did not look at the stored version")
        #expect(second.created == first.created)
        #expect(second.modified > first.modified)
        #expect(try await store.get("k") == Data("second, longer".utf8))
        #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: Int64("second, longer".utf8.count)))
    }

    @Test func createOnlyPutsStillRefuseAnExistingBlob() async throws {
        let store = try store("create-only")
        try await store.put(Data("one".utf8), identifier: "c", options: PutOptions(condition: .ifNoneMatch))
        let stored = try await store.head("c")
        await #expect(throws: BlobStoreError.preconditionFailed(store: "create-only", identifier: "c", expected: nil, actual: stored.etag)) {
            try await store.put(Data("two".utf8), identifier: "c", options: PutOptions(condition: .ifNoneMatch))
        }
        #expect(try await store.get("c") == Data("one".utf8))
        #expect(try await store.statistics().count == 1)
    }

    @Test func aDamagedFileUnderTheNameIsReplaced() async throws {
        let store = try store("damaged")
        try await store.put(Data("fine".utf8), identifier: "d")
        let file = path(of: "d", in: store)
        try Data("not a blob file at all".utf8).write(to: URL(fileURLWithPath: file))
        try await store.put(Data("repaired".utf8), identifier: "d")
        #expect(try await store.get("d") == Data("repaired".utf8))
        let report = try await store.verify()
        #expect(report.corrupt.isEmpty)
    }

    @Test func durablePutsAndFilesystemsWithoutNoReplaceLookUpFirst() async throws {
        let durable = try store("durable", durability: .durable)
        var before = lookups(durable)
        let stored = try await durable.put(Data("d".utf8), identifier: "x")
        #expect(lookups(durable) == before + 1)
        #expect(stored.created == stored.modified)

        let fallback = try store("fallback")
        fallback.core.noReplaceRenames.store(false, ordering: .relaxed)  // as after EINVAL from renameat2
        before = lookups(fallback)
        let first = try await fallback.put(Data("a".utf8), identifier: "y")
        #expect(lookups(fallback) == before + 1)
        try await Task.sleep(for: .milliseconds(5))
        let second = try await fallback.put(Data("bb".utf8), identifier: "y")
        #expect(second.created == first.created)
        #expect(try await fallback.get("y") == Data("bb".utf8))
        #expect(try await fallback.statistics() == StoreStatistics(count: 1, bytes: 2))
    }
}
