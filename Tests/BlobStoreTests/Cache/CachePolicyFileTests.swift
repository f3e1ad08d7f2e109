@testable import BlobStore
import Foundation
import Testing

@Suite("Cache mode: the policy kept with the store", .timeLimit(.minutes(1)))
struct CachePolicyFileTests {
    private static let policy = StorePolicy(maximumBytes: 1 << 30, maximumCount: 5000, defaultTimeToLive: .seconds(604_800))

    @Test func setPolicyIsKeptAndReadBackByEveryOpen() async throws {
        let root = TemporaryRoot()
        do {
            let store = try PersistentDataStore(name: "kept", root: root.url)
            #expect(try await store.policy() == .unlimited)
            #expect(!FileManager.default.fileExists(atPath: root.path + "/kept/policy"))
            try await store.setPolicy(Self.policy)
            #expect(try await store.policy() == Self.policy)
            let report = try await store.verify()
            #expect(report.orphaned.isEmpty && report.corrupt.isEmpty)
        }
        let text = try String(contentsOfFile: root.path + "/kept/policy", encoding: .utf8)
        #expect(PolicyFile.parse(text) == .success(Self.policy))
        // A read-only open reads the file.
        let reader = try PersistentDataStore(readingOnly: "kept", root: root.url)
        #expect(try await reader.policy() == Self.policy)
        await #expect(throws: BlobStoreError.self) { try await reader.setPolicy(.unlimited) }
        // An open without a policy keeps the stored one; with one, stores it.
        let again = try PersistentDataStore(name: "kept", root: root.url)
        #expect(try await again.policy() == Self.policy)
        let smaller = StorePolicy(maximumCount: 3)
        let configured = try PersistentDataStore(name: "kept", root: root.url, configuration: StoreConfiguration(policy: smaller))
        #expect(try await configured.policy() == smaller)
        #expect(try await reader.policy() == smaller)
    }

    @Test func aFreshEngineReadsTheStoredPolicy() async throws {
        let root = TemporaryRoot()
        let core = try StoreCore(root: root.path, name: "fresh", bucketCapacity: 8, policy: Self.policy)
        #expect(try core.cache.policy() == Self.policy)
        StoreRegistry.forget(core, root: root.path, name: "fresh")
        _ = consume core
        // The first engine is gone (its lock released); a new one starts from the file.
        let reopened = try StoreCore(root: root.path, name: "fresh", bucketCapacity: 8)
        #expect(try reopened.cache.policy() == Self.policy)
    }

    @Test func aPutWithAnExpiryPutsTheStoreInCacheMode() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(name: "expiring", root: root.url)
        try await store.put(Data("plain".utf8), identifier: "plain", options: PutOptions())
        #expect(!FileManager.default.fileExists(atPath: root.path + "/expiring/policy"))
        try await store.put(Data("brief".utf8), identifier: "brief", options: PutOptions(expiry: .after(.seconds(3600))))
        #expect(FileManager.default.fileExists(atPath: root.path + "/expiring/policy"))
        #expect(try await store.policy() == .unlimited)
        let counters = try await store.cacheCounters()
        #expect(counters.count == 2)
    }

    @Test func aReadOnlyOpenDoesNotServeExpiredBlobsEither() async throws {
        let root = TemporaryRoot()
        let clock = TestClock()
        let writer = try PersistentDataStore(name: "ro", root: root.url, configuration: StoreConfiguration(clock: clock.storeClock))
        _ = try await writer.put(Data("soon".utf8), identifier: "soon", options: PutOptions(expiry: .after(.seconds(5))))
        _ = try await writer.put(Data("kept".utf8), identifier: "kept", options: PutOptions())
        let reader = try PersistentDataStore(readingOnly: "ro", root: root.url, configuration: StoreConfiguration(clock: clock.storeClock))
        #expect(try await reader.get("soon") == Data("soon".utf8))
        clock.advance(by: .seconds(5))
        await #expect(throws: BlobStoreError.notFound(store: "ro", identifier: "soon")) { try await reader.get("soon") }
        #expect(try await reader.list(ListQuery()).items.map(\.identifier) == ["kept"])
        #expect(try await reader.statistics() == StoreStatistics(count: 1, bytes: 4))
        #expect(try await writer.statistics() == StoreStatistics(count: 1, bytes: 4))
    }

    @Test func invalidPoliciesAreRefused() async throws {
        let root = TemporaryRoot()
        let store = try PersistentDataStore(name: "bad", root: root.url)
        await #expect(throws: BlobStoreError.self) { try await store.setPolicy(StorePolicy(maximumBytes: -1)) }
        await #expect(throws: BlobStoreError.self) { try await store.setPolicy(StorePolicy(defaultTimeToLive: .zero)) }
        let memory = try InMemoryBlobStore()
        await #expect(throws: BlobStoreError.self) { try await memory.setPolicy(StorePolicy(maximumCount: -1)) }
    }

    @Test func aDamagedPolicyFileIsReportedByName() throws {
        let root = TemporaryRoot()
        _ = try PersistentDataStore(name: "damaged", root: root.url)
        try Data("not a policy\n".utf8).write(to: root.url.appendingPathComponent("damaged/policy"))
        #expect(throws: BlobStoreError.corrupt(path: root.path + "/damaged/policy", reason: "first line is not 'blobstore-policy 1'")) {
            _ = try PersistentDataStore(readingOnly: "damaged", root: root.url)
            _ = try PolicyFile.read(StorePaths(root: root.path, name: "damaged"))
        }
    }
}

@Suite("Cache mode: the expiry in the blob header")
struct CacheHeaderTests {
    private func header(expires: Int64?) -> BlobHeader {
        BlobHeader(
            identifier: "id", size: 3, checksum: 7, createdNanoseconds: 1, modifiedNanoseconds: 2, contentType: "text/plain",
            userMetadata: ["k": "v"], image: nil, expiresNanoseconds: expires)
    }

    @Test func aHeaderWithoutExpiryIsWhatEarlierBuildsWrote() throws {
        let bytes = header(expires: nil).encoded()
        #expect(bytes[41] == 0)
        #expect(bytes.count == BlobHeader.fixedLength + 2 + 10 + 4 + 2 + 8)
        let decoded = try bytes.withUnsafeBytes { try BlobHeader.decode($0) }
        #expect(decoded.expiresNanoseconds == nil)
        #expect(decoded.metadata.expires == nil)
    }

    @Test func anExpiryRoundTrips() throws {
        let bytes = header(expires: 1_893_456_000_000_000_000).encoded()
        #expect(bytes[41] == BlobHeader.expiryFlag)
        let decoded = try bytes.withUnsafeBytes { try BlobHeader.decode($0) }
        #expect(decoded == header(expires: 1_893_456_000_000_000_000))
        #expect(decoded.metadata.expires == Date(timeIntervalSince1970: 1_893_456_000))
    }

    @Test func unknownFlagsAreDamage() throws {
        var bytes = header(expires: nil).encoded()
        bytes[41] = 2
        // Re-seal the header checksum so only the flag is wrong.
        let length = bytes.count
        let sum = bytes.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[0..<(length - 8)])) }
        withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange((length - 8)..<length, with: $0) }
        #expect(throws: BlobHeader.DecodeError.invalid("unknown header flags 2")) { try bytes.withUnsafeBytes { try BlobHeader.decode($0) } }
    }
}
