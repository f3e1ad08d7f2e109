import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// How a put's temp file becomes its blob (docs/STORAGE.md, "Writing"): every put writes a named file
/// in `tmp/` and the commit renames it into place, looking up what it replaces first. These check what
/// that stores and what it leaves behind, in both durability modes.
@Suite struct PutPublishingTests {
    let root = TemporaryRoot()

    func store(_ name: String, durability: Durability = .relaxed, capacity: Int = 8192) throws -> PersistentDataStore {
        try PersistentDataStore(name: name, root: root.url, configuration: StoreConfiguration(durability: durability, bucketCapacity: capacity))
    }

    /// Waits until the store's background reclaims (dropped temp files) are done.
    func reclaimed(_ store: PersistentDataStore) { store.core.reclaimQueue.sync {} }

    func lookups(_ store: PersistentDataStore) -> Int { store.core.commitLookups.load(ordering: .relaxed) }

    /// The path of `identifier`'s file under the store's current bucket map.
    func path(of identifier: String, in store: PersistentDataStore) -> String {
        store.core.queue.sync { store.core.locate(identifier).path }
    }

    @Test(arguments: [Durability.relaxed, .durable]) func newBlobsAreStoredAndLeaveNoTempFile(durability: Durability) async throws {
        let store = try store("new", durability: durability, capacity: 16)  // small buckets: the run also splits
        var expected: [String: Data] = [:]
        for index in 0..<60 {
            let data = Data("blob \(index)".utf8)
            let metadata = try await store.put(data, identifier: "id-\(index)")
            #expect(metadata.created == metadata.modified)
            expected["id-\(index)"] = data
        }
        for (identifier, data) in expected { #expect(try await store.get(identifier) == data) }
        let stored = try await store.statistics()
        #expect(stored.count == 60)
        #expect(stored.bytes == Int64(expected.values.map(\.count).reduce(0, +)))
        #expect(try await store.listAll().map(\.identifier).sorted() == expected.keys.sorted())
        #expect(try await store.verify().isClean)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
    }

    @Test(arguments: [Durability.relaxed, .durable]) func anExistingBlobIsLookedUpAndReplacedKeepingItsCreationTime(durability: Durability) async throws {
        let store = try store("overwrite", durability: durability)
        let first = try await store.put(Data("first".utf8), identifier: "k")
        try await Task.sleep(for: .milliseconds(5))
        let before = lookups(store)
        let second = try await store.put(Data("second, longer".utf8), identifier: "k")
        #expect(lookups(store) == before + 1, "the replacement did not look at the stored version once")
        #expect(second.created == first.created)
        #expect(second.modified > first.modified)
        #expect(try await store.get("k") == Data("second, longer".utf8))
        #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: Int64("second, longer".utf8.count)))
        reclaimed(store)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty, "the replacement left its temp file behind")
    }

    @Test func createOnlyPutsRefuseAnExistingBlob() async throws {
        let store = try store("create-only")
        try await store.put(Data("one".utf8), identifier: "c", options: PutOptions(condition: .ifNoneMatch))
        let stored = try await store.head("c")
        await #expect(throws: BlobStoreError.preconditionFailed(store: "create-only", identifier: "c", expected: nil, actual: stored.etag)) {
            try await store.put(Data("two".utf8), identifier: "c", options: PutOptions(condition: .ifNoneMatch))
        }
        #expect(try await store.get("c") == Data("one".utf8))
        #expect(try await store.statistics().count == 1)
        reclaimed(store)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
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

    /// Watches a put while it waits for its commit (the barrier queue held): the entries of the temp folder.
    func tempWhileWaiting(_ store: PersistentDataStore, _ identifier: String) async throws -> [String] {
        let release = hold(store.core.queue)
        let put = Task { try await store.put(Data(repeating: 7, count: 100_000), identifier: identifier) }
        var names: [String] = []
        for _ in 0..<400 {
            names = try DirectoryStream.entries(of: store.core.tempPath).map(\.name)
            if !names.isEmpty { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        release()
        _ = try await put.value
        reclaimed(store)
        return names
    }

    /// Both modes write a named file in `tmp/`, which the commit renames away (a killed process leaves it
    /// for the next open's sweep, `FileStoreLayoutTests.crashLeftoversAreClearedAndPendingSplitsFinishedOnOpen`).
    @Test(arguments: [Durability.relaxed, .durable]) func aPutWaitingForItsCommitHasANamedFileInTmp(durability: Durability) async throws {
        let store = try store("kinds", durability: durability)
        let names = try await tempWhileWaiting(store, "w")
        #expect(names.count == 1 && names.allSatisfy { $0.hasPrefix("put-") }, "\(names)")
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
        #expect(try await store.get("w").count == 100_000)
    }

    @Test func aWriterDroppedMidWayGivesBackItsFile() throws {
        let store = try store("dropped")
        do {
            let writer = try TempBlobWriter(core: store.core, identifier: "half", options: PutOptions(), durable: false, maximumSize: 1 << 30)
            try Data(repeating: 3, count: 300_000).withUnsafeBytes { try writer.append($0) }  // past the in-memory prefix: a file exists
            #expect(try DirectoryStream.entries(of: store.core.tempPath).count == 1)
        }
        reclaimed(store)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
    }

    @Test func failedPutsLeaveNoTempFile() async throws {
        let store = try store("failed")
        let stored = try await store.put(Data("v1".utf8), identifier: "m")
        for index in 0..<20 {
            await #expect(throws: BlobStoreError.self) {
                try await store.put(Data("stale \(index)".utf8), identifier: "m", options: PutOptions(condition: .ifNoneMatch))
            }
            await #expect(throws: BlobStoreError.self) {
                try await store.put(Data("stale".utf8), identifier: "m", options: PutOptions(condition: .ifMatch(ETag(checksum: 1))))
            }
        }
        reclaimed(store)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
        #expect(try await store.head("m") == stored)
    }
}
