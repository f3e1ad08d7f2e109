import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// Relaxed puts write anonymous temp files where the filesystem allows, up to a budget of open ones.
@Suite struct AnonymousTempFileTests {
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
}
