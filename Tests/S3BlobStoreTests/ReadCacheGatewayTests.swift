import BlobStore
import BlobSystem
import BlobTestSupport
import Foundation
@testable import S3BlobStore
import Testing

/// The read cache in front of a real ``S3BlobStore`` on the `.ci/ceph` gateway (skipped with a
/// printed reason without one): a fill relies on the store's reader to check the content, once.
@Suite struct ReadCacheGatewayTests {
    /// An object whose content does not match its header's XXH64 (same length, other bytes): the
    /// read through the cache fails as `corrupt` naming the object, whether its entry would be held
    /// in memory or in a file; nothing is kept; a good version put over it is then served and kept.
    @Test(arguments: [4_096, 300_000])
    func aDamagedObjectIsCorruptThroughTheCacheAndNeverKept(size: Int) async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let folder = ReadCacheFolder()
        defer { folder.remove() }
        let cache = try S3ReadCache(S3ReadCacheConfiguration(folder: folder.path))
        let cached = S3CachedStore(store, cache: cache)
        let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let good = try await store.put(content, identifier: "d")
        let key = store.layout.blobKey(store: store.name, identifier: "d")
        var damaged = Array(content)
        damaged[size - 1] ^= 0x40
        try StoreGatewayTests.writeRaw(store, key: key, content: damaged, metadata: S3MetadataHeader.encode(good))

        let error = #expect(throws: BlobStoreError.self) { try cached.open("d").close() }
        guard case .corrupt(let path, let reason)? = error else {
            Issue.record("expected corrupt, got \(String(describing: error))")
            return
        }
        #expect(path == "s3://\(store.client.bucket.name)/\(key)" && reason.contains(good.etag.rawValue))
        #expect(cache.occupancy.entries == 0 && cache.counters.fills == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/entries").isEmpty)

        _ = try await store.put(content, identifier: "d")
        let blob = try cached.open("d")
        defer { blob.close() }
        #expect(try blob.read(0..<Int64(size)) == content)
        #expect(cache.occupancy.entries == 1 && cache.counters.fills == 1)
    }

    /// The gateway keeps an expired blob's object (S3 has no sweep) and answers the cache's
    /// conditional GET of it `304`: the read is still "not found", within the staleness bound or
    /// not, and a version put over it is served. The cache's wall clock is moved past the expiry.
    @Test(arguments: [0.0, 60])
    func anExpiredBlobIsNotFoundThroughTheCacheThoughTheGatewayAnswers304(staleness: Double) async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let folder = ReadCacheFolder()
        defer { folder.remove() }
        let wallClock = ReadCacheWallClock()
        let cache = try S3ReadCache(S3ReadCacheConfiguration(folder: folder.path, stalenessSeconds: staleness, date: wallClock.read))
        let cached = S3CachedStore(store, cache: cache)
        try await store.put(Data("for an hour".utf8), identifier: "e", options: PutOptions(expiry: .after(.seconds(3_600))))
        let first = try cached.open("e")
        #expect(try first.read(0..<first.metadata.size) == Data("for an hour".utf8))
        first.close()

        wallClock.advance(seconds: 7_200)
        #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "e")) { try cached.open("e") }
        #expect(cache.counters.notModified == 1 && cache.counters.hits == 0, "\(cache.counters)")
        let key = store.layout.blobKey(store: store.name, identifier: "e")
        let head = try store.client.send(try store.client.bucket.headObject(key: key), context: store.client.bucket.context("HeadObject", key: key))
        #expect(head.status.code == 200, "the gateway still has the object")

        try await store.put(Data("lasting".utf8), identifier: "e")
        let replaced = try cached.open("e")
        defer { replaced.close() }
        #expect(try replaced.read(0..<replaced.metadata.size) == Data("lasting".utf8))
    }
}
