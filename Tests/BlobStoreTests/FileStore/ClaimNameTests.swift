import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// Relaxed puts that may create their blob claim the name before looking anything up
/// (`StoreCore.claimsNameFirst`): an anonymous temp file is linked under it, a named one renamed with
/// `renameat2(RENAME_NOREPLACE)`; only a name that exists costs a lookup. These check, for both kinds
/// of temp file, that the shortcut changes how much is read, never what is stored.
@Suite struct ClaimNameTests {
    let root = TemporaryRoot()

    /// `anonymous: false` makes the store write named temp files, as on a filesystem without `O_TMPFILE`.
    func store(_ name: String, durability: Durability = .relaxed, capacity: Int = 8192, anonymous: Bool = true) throws
        -> PersistentDataStore
    {
        let store = try PersistentDataStore(
            name: name, root: root.url, configuration: StoreConfiguration(durability: durability, bucketCapacity: capacity))
        #expect(store.core.anonymousTempFilesWork(), "this filesystem cannot create anonymous files")
        if !anonymous { store.core.refuseAnonymousTempFiles() }
        return store
    }

    /// Waits until the store's background reclaims (dropped temp files) are done.
    func reclaimed(_ store: PersistentDataStore) { store.core.reclaimQueue.sync {} }

    func lookups(_ store: PersistentDataStore) -> Int { store.core.commitLookups.load(ordering: .relaxed) }

    /// The path of `identifier`'s file under the store's current bucket map.
    func path(of identifier: String, in store: PersistentDataStore) -> String {
        store.core.queue.sync { store.core.locate(identifier).path }
    }

    @Test(arguments: [true, false]) func newBlobsAreStoredWithoutALookup(anonymous: Bool) async throws {
        let store = try store("new", capacity: 16, anonymous: anonymous)  // small buckets: the run also splits
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
        #expect(try await store.verify().isClean)
        #expect(store.core.anonymousTemps.count == 0, "a published anonymous file was not ended")
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
    }

    @Test(arguments: [true, false]) func anExistingNameIsLookedUpAndReplacedKeepingItsCreationTime(anonymous: Bool) async throws {
        let store = try store("overwrite", anonymous: anonymous)
        let first = try await store.put(Data("first".utf8), identifier: "k")
        try await Task.sleep(for: .milliseconds(5))
        let before = lookups(store)
        let second = try await store.put(Data("second, longer".utf8), identifier: "k")
        #expect(lookups(store) > before, "the replacement did not look at the stored version")
        #expect(second.created == first.created)
        #expect(second.modified > first.modified)
        #expect(try await store.get("k") == Data("second, longer".utf8))
        #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: Int64("second, longer".utf8.count)))
        reclaimed(store)
        #expect(store.core.anonymousTemps.count == 0)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty, "the replacement left its temp name behind")
    }

    @Test(arguments: [true, false]) func createOnlyPutsStillRefuseAnExistingBlob(anonymous: Bool) async throws {
        let store = try store("create-only", anonymous: anonymous)
        try await store.put(Data("one".utf8), identifier: "c", options: PutOptions(condition: .ifNoneMatch))
        let stored = try await store.head("c")
        await #expect(throws: BlobStoreError.preconditionFailed(store: "create-only", identifier: "c", expected: nil, actual: stored.etag)) {
            try await store.put(Data("two".utf8), identifier: "c", options: PutOptions(condition: .ifNoneMatch))
        }
        #expect(try await store.get("c") == Data("one".utf8))
        #expect(try await store.statistics().count == 1)
        reclaimed(store)
        #expect(store.core.anonymousTemps.count == 0, "the refused put's anonymous file was not dropped")
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
    }

    @Test(arguments: [true, false]) func aDamagedFileUnderTheNameIsReplaced(anonymous: Bool) async throws {
        let store = try store("damaged", anonymous: anonymous)
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

        let fallback = try store("fallback", anonymous: false)
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

    /// Watches a put while it waits for its commit (the barrier queue held): which kind of temp file it
    /// wrote, seen from the outside (an entry in the temp folder or none) and in the store's count (how
    /// many more anonymous files are open than before).
    func tempWhileWaiting(_ store: PersistentDataStore, _ identifier: String) async throws -> (names: [String], anonymous: Int) {
        let openBefore = store.core.anonymousTemps.count
        let release = hold(store.core.queue)
        let put = Task { try await store.put(Data(repeating: 7, count: 100_000), identifier: identifier) }
        var seen: (names: [String], anonymous: Int) = ([], 0)
        for _ in 0..<400 {
            seen = (try DirectoryStream.entries(of: store.core.tempPath).map(\.name), store.core.anonymousTemps.count - openBefore)
            if !seen.names.isEmpty || seen.anonymous > 0 { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        release()
        _ = try await put.value
        reclaimed(store)
        return seen
    }

    @Test func relaxedPutsWriteAnonymousFilesAndDurableOnesNamedFiles() async throws {
        let relaxed = try store("kinds-relaxed")
        let anonymous = try await tempWhileWaiting(relaxed, "r")
        #expect(anonymous.names.isEmpty && anonymous.anonymous == 1, "\(anonymous)")
        #expect(relaxed.core.anonymousTemps.count == 0)

        let durable = try store("kinds-durable", durability: .durable)
        let named = try await tempWhileWaiting(durable, "d")
        #expect(named.names.count == 1 && named.anonymous == 0, "\(named)")

        let fallback = try store("kinds-fallback", anonymous: false)
        let refused = try await tempWhileWaiting(fallback, "f")
        #expect(refused.names.count == 1 && refused.anonymous == 0, "\(refused)")
        for store in [relaxed, durable, fallback] {
            #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
            #expect(try await store.get(store === relaxed ? "r" : store === durable ? "d" : "f").count == 100_000)
        }
    }

    /// The probe runs when the first relaxed put needs a file, not when a store opens: durable stores
    /// and stores that are only read never write in the temp folder for it.
    @Test func onlyARelaxedPutProbesForAnonymousFiles() async throws {
        let durable = try PersistentDataStore(name: "probe-durable", root: root.url, configuration: StoreConfiguration(durability: .durable))
        try await durable.put(Data("d".utf8), identifier: "d")
        #expect(!durable.core.anonymousTempFilesProbed)
        let relaxed = try PersistentDataStore(name: "probe-relaxed", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        _ = try? await relaxed.get("absent")
        #expect(!relaxed.core.anonymousTempFilesProbed)
        try await relaxed.put(Data("r".utf8), identifier: "r")
        #expect(relaxed.core.anonymousTempFilesProbed)
        #expect(try DirectoryStream.entries(of: relaxed.core.tempPath).isEmpty, "the probe left its file behind")
    }

    @Test func pastTheLimitOfOpenAnonymousFilesPutsWriteNamedOnes() async throws {
        let store = try store("limit")
        let budget = store.core.anonymousTemps
        for _ in 0..<budget.limit { #expect(budget.reserve()) }
        #expect(!budget.reserve())
        let seen = try await tempWhileWaiting(store, "over")
        #expect(seen.names.count == 1, "a put past the limit did not write a named file: \(seen)")
        #expect(seen.anonymous == 0)
        #expect(budget.count == budget.limit)
        for _ in 0..<budget.limit { budget.release() }
        #expect(try await store.get("over").count == 100_000)
    }

    @Test(arguments: [true, false]) func aWriterDroppedMidWayGivesBackItsFile(anonymous: Bool) throws {
        let store = try store("dropped", anonymous: anonymous)
        do {
            let writer = try TempBlobWriter(
                core: store.core, identifier: "half", options: PutOptions(), durable: false, maximumSize: 1 << 30)
            try Data(repeating: 3, count: 300_000).withUnsafeBytes { try writer.append($0) }  // past the in-memory prefix: a file exists
            #expect(store.core.anonymousTemps.count == (anonymous ? 1 : 0))
        }
        reclaimed(store)
        #expect(store.core.anonymousTemps.count == 0)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
    }

    @Test(arguments: [true, false]) func failedPutsLeaveNoTempFileAndReleaseTheirDescriptors(anonymous: Bool) async throws {
        let store = try store("failed", anonymous: anonymous)
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
        #expect(store.core.anonymousTemps.count == 0)
        #expect(try DirectoryStream.entries(of: store.core.tempPath).isEmpty)
        #expect(try await store.head("m") == stored)
    }
}
