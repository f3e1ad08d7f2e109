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
}
