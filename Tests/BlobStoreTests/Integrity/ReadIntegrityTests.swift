import BlobSystem
import Foundation
import Testing

@testable import BlobStore

#if canImport(Glibc)
import Glibc
#endif

/// Damage to a blob file after it was stored: a content byte flipped on disk, the file cut short
/// mid-content, or bytes appended. No read may hand out such a blob as complete: whole reads
/// throw `corrupt` naming the store, blob and path; streams withhold their last chunk and throw.
@Suite struct ReadIntegrityTests {
    let root = TemporaryRoot()

    /// Sizes on both sides of every read path: in the first read with the header (64 KiB on the
    /// queue, 16 KiB for the blocking handle), past it, and past the 1 MiB inline read.
    static let sizes = [1, 100, 10_000, 40_000, 200_000, 1_500_000]

    typealias Damage = BlobFileDamage

    func store(_ name: String, inline: Bool = true) throws -> PersistentDataStore {
        try PersistentDataStore(
            name: name, root: root.url, configuration: StoreConfiguration(durability: .relaxed, inlineCachedReads: inline))
    }

    static func content(_ size: Int) -> Data { Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }) }

    /// Stores `size` bytes as "blob" and damages its file; the file's path.
    func damagedBlob(_ store: PersistentDataStore, size: Int, _ damage: Damage) async throws -> String {
        try await store.put(ReadIntegrityTests.content(size), identifier: "blob")
        let path = store.core.queue.sync { store.core.locate("blob").path }
        try damage.apply(to: path, contentSize: size)
        return path
    }

    func expectCorrupt(_ error: any Error, path: String, store: String, _ comment: Comment) {
        guard case BlobStoreError.corrupt(let errorPath, let reason) = error else {
            Issue.record("expected corrupt, got \(error); \(comment)")
            return
        }
        #expect(errorPath == path, comment)
        #expect(reason.contains("blob 'blob'") && reason.contains("store '\(store)'"), "\(reason); \(comment)")
    }

    @Test(arguments: Damage.allCases, [true, false])
    func wholeReadsRefuseADamagedBlob(damage: Damage, inline: Bool) async throws {
        for size in ReadIntegrityTests.sizes {
            let name = "w\(size)"
            let store = try store(name, inline: inline)
            let path = try await damagedBlob(store, size: size, damage)
            let what: Comment = "\(damage), \(size) bytes, inline \(inline)"
            await #expect(throws: BlobStoreError.self, what) { _ = try await store.get("blob") }
            do { _ = try await store.get("blob") } catch { expectCorrupt(error, path: path, store: name, what) }
            // A part of the blob is refused too, whichever part the damage is in.
            do {
                _ = try await store.get("blob", range: 0..<1)
                Issue.record("ranged get answered; \(what)")
            } catch { expectCorrupt(error, path: path, store: name, what) }
            // The blocking handle (blobd's reads) refuses every read, a part or the whole.
            let handle = try store.openForReading("blob")
            #expect(throws: BlobStoreError.self, what) { _ = try handle.read(0..<Int64(size)) }
            #expect(throws: BlobStoreError.self, what) { _ = try handle.read(Int64(size / 2)..<Int64(size)) }  // and again
            handle.close()
            let part = try store.openForReading("blob")
            do {
                _ = try part.read(0..<1)
                Issue.record("handle read answered; \(what)")
            } catch { expectCorrupt(error, path: path, store: name, what) }
            part.close()
            // A download leaves no file behind.
            let target = root.url.appendingPathComponent("download-\(size)")
            await #expect(throws: BlobStoreError.self, what) { _ = try await store.download("blob", to: target) }
            #expect(!FileManager.default.fileExists(atPath: target.path), what)
            // The header is intact: metadata is still served.
            #expect(try await store.head("blob").size == Int64(size), what)
        }
    }

    @Test(arguments: Damage.allCases)
    func streamsNeverEndCompleteOnADamagedBlob(damage: Damage) async throws {
        for size in ReadIntegrityTests.sizes {
            let name = "s\(size)"
            let store = try store(name)
            let path = try await damagedBlob(store, size: size, damage)
            for range in [nil, 0..<Int64(1), Int64(size - 1)..<Int64(size)] as [Range<Int64>?] {
                let what: Comment = "\(damage), \(size) bytes, range \(String(describing: range))"
                let stream = try await store.stream("blob", range: range, chunkSize: 16 * 1024)
                var received = 0
                do {
                    for try await chunk in stream { received += chunk.count }
                    Issue.record("stream ended without an error; \(what)")
                } catch { expectCorrupt(error, path: path, store: name, what) }
                #expect(received < (range?.count ?? size), what)
            }
        }
    }

    @Test func healthyBlobsPassEveryRead() async throws {
        let store = try store("ok")
        for size in [0] + ReadIntegrityTests.sizes {
            let data = ReadIntegrityTests.content(size)
            try await store.put(data, identifier: "blob")
            #expect(try await store.get("blob") == data)
            if size > 2 { #expect(try await store.get("blob", range: 1..<Int64(size - 1)) == data[1..<(size - 1)]) }
            var streamed = Data()
            for try await chunk in try await store.stream("blob", range: nil, chunkSize: 7000) { streamed += chunk }
            #expect(streamed == data)
            let handle = try store.openForReading("blob")
            #expect(try handle.read(0..<Int64(size)) == data)
            #expect(try handle.read(0..<Int64(size / 2)) == data[..<(size / 2)])
            handle.close()
        }
    }
}
