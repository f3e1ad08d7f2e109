import BlobStore
import Foundation
import Testing

@Suite("Put and get", .backends, .timeLimit(.minutes(5)))
struct PutGetBehaviourTests {
    @Test("round trip keeps the exact bytes", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let contents: [(String, Data)] = [
                ("empty", Data()),
                ("one", Data([0x2A])),
                ("all-bytes", Data((0...255).map { UInt8($0) })),
                ("mebibyte", pseudoRandomBytes(1 << 20, seed: 1)),
            ]
            for (id, data) in contents {
                let metadata = try await store.put(data, identifier: id)
                #expect(metadata.identifier == id)
                #expect(metadata.size == Int64(data.count))
                #expect(metadata.etag == expectedETag(data))
            }
            for (id, data) in contents {
                let read = try await store.get(id)
                #expect(read == data, "content of \(id)")
                #expect(read.count == data.count)
                #expect(try await store.head(id).size == Int64(data.count))
            }
        }
    }

    @Test("put returns the metadata head reports", arguments: StoreKind.allCases)
    func putMatchesHead(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let stored = try await store.put(
                Data("hello".utf8), identifier: "greeting",
                options: PutOptions(contentType: "text/plain; charset=utf-8", userMetadata: ["lang": "en", "x-y_z": "ü v"]))
            let head = try await store.head("greeting")
            #expect(head == stored)
            #expect(head.contentType == "text/plain; charset=utf-8")
            #expect(head.userMetadata == ["lang": "en", "x-y_z": "ü v"])
            #expect(head.image == nil)
        }
    }

    @Test("a nil identifier gets a new UUID", arguments: StoreKind.allCases)
    func generatedIdentifier(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let first = try await store.put(Data("a".utf8))
            let second = try await store.put(Data("b".utf8))
            #expect(UUID(uuidString: first.identifier) != nil)
            #expect(UUID(uuidString: second.identifier) != nil)
            #expect(first.identifier != second.identifier)
            #expect(try await store.get(first.identifier) == Data("a".utf8))
            #expect(try await store.get(second.identifier) == Data("b".utf8))
        }
    }

    @Test("ETag is the XXH64 of the content", arguments: StoreKind.allCases)
    func etagIsXXH64(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            // Published XXH64 (seed 0) test vectors.
            #expect(try await store.put(Data(), identifier: "empty").etag.rawValue == "ef46db3751d8e999")
            #expect(try await store.put(Data("abc".utf8), identifier: "abc").etag.rawValue == "44bc2cf5ad770999")
            let data = pseudoRandomBytes(100_003, seed: 7)
            let metadata = try await store.put(data, identifier: "random")
            #expect(metadata.etag == ETag(checksum: XXH64.hash(data)))
            // Same content, same ETag; different content, different ETag.
            #expect(try await store.put(data, identifier: "random-copy").etag == metadata.etag)
            var changed = data
            changed[50_000] ^= 1
            #expect(try await store.put(changed, identifier: "random-changed").etag != metadata.etag)
        }
    }

    @Test("overwrite keeps created, advances modified, changes the ETag", arguments: StoreKind.allCases)
    func overwrite(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let first = try await store.put(Data("one".utf8), identifier: "doc", options: PutOptions(userMetadata: ["v": "1"]))
            #expect(first.created == first.modified)
            try await tick()
            let second = try await store.put(Data("two!".utf8), identifier: "doc")
            #expect(second.created == first.created)
            #expect(second.modified > first.modified)
            #expect(second.etag != first.etag)
            #expect(second.size == 4)
            #expect(second.userMetadata.isEmpty, "an overwrite replaces user metadata")
            #expect(try await store.get("doc") == Data("two!".utf8))
            #expect(try await store.head("doc") == second)
            #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 4))
        }
    }

    @Test("remove resets created", arguments: StoreKind.allCases)
    func removeResetsCreated(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let first = try await store.put(Data("one".utf8), identifier: "doc")
            try await tick()
            #expect(try await store.remove("doc"))
            try await tick()
            let again = try await store.put(Data("one".utf8), identifier: "doc")
            #expect(again.created > first.created)
            #expect(again.created == again.modified)
        }
    }

    @Test("a Data slice is stored as its own bytes; reads return Data indexed from 0", arguments: StoreKind.allCases)
    func dataSlice(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let whole = Data((0..<100).map { UInt8($0) })
            let slice = whole[10..<20]
            let metadata = try await store.put(slice, identifier: "slice")
            #expect(metadata.size == 10)
            let read = try await store.get("slice")
            #expect(read == Data((10..<20).map { UInt8($0) }))
            #expect(read.startIndex == 0)
            #expect(try await store.get("slice", range: 2..<5).startIndex == 0)
            #expect(try await collect(store.stream("slice", range: nil, chunkSize: 4)).data.startIndex == 0)
            var chunkStarts: [Int] = []
            for try await chunk in try await store.stream("slice", range: 1..<9, chunkSize: 3) { chunkStarts.append(chunk.startIndex) }
            #expect(chunkStarts == [0, 0, 0])
        }
    }

    @Test("missing blobs are notFound", arguments: StoreKind.allCases)
    func notFound(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let missing = BlobStoreError.notFound(store: store.name, identifier: "nope")
            await #expect(throws: missing) { try await store.get("nope") }
            await #expect(throws: missing) { try await store.get("nope", range: 0..<1) }
            await #expect(throws: missing) { try await store.head("nope") }
            await #expect(throws: missing) { try await store.stream("nope") }
            let directory = TempFolder()
            await #expect(throws: missing) { try await store.download("nope", to: directory.file("out")) }
            #expect(try directory.entries().isEmpty)
            #expect(try await store.exists("nope") == false)
            #expect(try await store.remove("nope") == false)
        }
    }

    @Test("head, exists, remove, removeAll and statistics agree", arguments: StoreKind.allCases)
    func bookkeeping(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            #expect(try await store.statistics() == StoreStatistics(count: 0, bytes: 0))
            try await store.put(Data(count: 10), identifier: "a")
            try await store.put(Data(count: 20), identifier: "b")
            try await store.put(Data(), identifier: "c")
            #expect(try await store.statistics() == StoreStatistics(count: 3, bytes: 30))
            #expect(try await store.exists("a"))
            try await store.put(Data(count: 5), identifier: "a")
            #expect(try await store.statistics() == StoreStatistics(count: 3, bytes: 25))
            #expect(try await store.remove("b"))
            #expect(try await store.remove("b") == false)
            #expect(try await store.exists("b") == false)
            #expect(try await store.statistics() == StoreStatistics(count: 2, bytes: 5))
            try await store.removeAll()
            #expect(try await store.statistics() == StoreStatistics(count: 0, bytes: 0))
            #expect(try await store.exists("a") == false)
            #expect(try await store.exists("c") == false)
            #expect(try await store.listAll().isEmpty)
            // The store is usable after removeAll.
            try await store.put(Data(count: 3), identifier: "a")
            #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 3))
        }
    }

    @Test("download writes the exact bytes and leaves nothing else", arguments: StoreKind.allCases)
    func download(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let directory = TempFolder()
            let data = pseudoRandomBytes(300_001, seed: 3)
            let stored = try await store.put(data, identifier: "big")
            let target = directory.file("copy.bin")
            let metadata = try await store.download("big", to: target)
            #expect(kind.sameStreamMetadata(metadata, stored), "\(metadata) vs \(stored)")
            #expect(try Data(contentsOf: target) == data)
            // Replacing a longer existing file leaves exactly the blob's bytes.
            try pseudoRandomBytes(500_000, seed: 4).write(to: target)
            try await store.put(Data("short".utf8), identifier: "small")
            _ = try await store.download("small", to: target)
            #expect(try Data(contentsOf: target) == Data("short".utf8))
            // An empty blob downloads as an empty file.
            try await store.put(Data(), identifier: "empty")
            _ = try await store.download("empty", to: directory.file("empty.bin"))
            #expect(try Data(contentsOf: directory.file("empty.bin")) == Data())
            #expect(try directory.entries() == ["copy.bin", "empty.bin"], "no temporary files left beside the target")
        }
    }

    @Test("distinct byte sequences are distinct blobs, even when canonically equivalent", arguments: StoreKind.allCases)
    func normalisationDistinct(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let precomposed = "caf\u{E9}"
            let decomposed = "cafe\u{301}"
            #expect(precomposed == decomposed, "Swift String equality is canonical equivalence")
            try await store.put(Data("NFC".utf8), identifier: precomposed)
            try await store.put(Data("NFD".utf8), identifier: decomposed)
            #expect(try await store.get(precomposed) == Data("NFC".utf8))
            #expect(try await store.get(decomposed) == Data("NFD".utf8))
            #expect(try await store.statistics().count == 2)
            let listed = try await store.listAll().map(\.identifier)
            #expect(utf8Bytes(listed) == utf8Bytes(byteOrdered([precomposed, decomposed])))
            #expect(try await store.remove(decomposed))
            #expect(try await store.get(precomposed) == Data("NFC".utf8))
            #expect(try await store.exists(decomposed) == false)
        }
    }
}
