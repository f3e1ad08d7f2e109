import BlobStore
import BlobSystem
import Foundation
import Testing

// Three minutes: each one-byte chunk of the streaming test is a queue round trip, and under the
// thread sanitizer with the cores busy one store kind's run took over a minute.
@Suite("Ranges, streams and streamed puts", .backends, .timeLimit(.minutes(5)))
struct ContentAccessBehaviourTests {
    @Test("byte ranges are clamped at the end and refused past it", arguments: StoreKind.allCases)
    func ranges(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let data = Data((0..<100).map { UInt8($0) })
            try await store.put(data, identifier: "hundred")
            #expect(try await store.get("hundred", range: 10..<20) == data.subdata(in: 10..<20))
            #expect(try await store.get("hundred", range: 0..<100) == data)
            #expect(try await store.get("hundred", range: 90..<1000) == data.subdata(in: 90..<100))
            #expect(try await store.get("hundred", range: 99..<100) == Data([99]))
            #expect(try await store.get("hundred", range: 5..<5) == Data())
            #expect(try await store.get("hundred", range: 100..<100) == Data())
            let range = try await store.get("hundred", range: 10..<20)
            #expect(range.first == 10, "a range read is indexable from its start")
            let unsatisfiable = BlobStoreError.rangeNotSatisfiable(store: store.name, identifier: "hundred", size: 100)
            await #expect(throws: unsatisfiable) { try await store.get("hundred", range: 100..<101) }
            await #expect(throws: unsatisfiable) { try await store.get("hundred", range: 150..<200) }
            await #expect(throws: unsatisfiable) { try await store.get("hundred", range: 101..<101) }
            await #expect(throws: unsatisfiable) { try await store.get("hundred", range: -1..<10) }
            await #expect(throws: unsatisfiable) { try await store.stream("hundred", range: 100..<200, chunkSize: 10) }
            try await store.put(Data(), identifier: "empty")
            #expect(try await store.get("empty", range: 0..<0) == Data())
            await #expect(throws: BlobStoreError.rangeNotSatisfiable(store: store.name, identifier: "empty", size: 0)) {
                try await store.get("empty", range: 0..<1)
            }
        }
    }

    @Test("streaming with a small chunk size reassembles exactly", arguments: StoreKind.allCases)
    func streaming(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let data = pseudoRandomBytes(10_007, seed: 11)
            let stored = try await store.put(data, identifier: "stream-me")
            for chunkSize in [1, 7, 4096, 10_007, 1 << 20] {
                // One-byte chunks over the first 1,001 bytes only: each chunk is a queue round trip,
                // and 10,007 of them took over a minute under the thread sanitizer on a busy machine.
                let range: Range<Int64> = chunkSize == 1 ? 0..<1_001 : 0..<10_007
                let expected = data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound))
                let stream = try await store.stream("stream-me", range: chunkSize == 1 ? range : nil, chunkSize: chunkSize)
                #expect(kind.sameStreamMetadata(stream.metadata, stored), "\(stream.metadata) vs \(stored)")
                #expect(stream.range == range)
                let (read, sizes) = try await collect(stream)
                #expect(read == expected, "chunk size \(chunkSize)")
                #expect(sizes.allSatisfy { $0 > 0 && $0 <= chunkSize }, "chunk size \(chunkSize)")
                #expect(sizes.count >= (expected.count + chunkSize - 1) / chunkSize)
            }
            // The default stream.
            #expect(try await collect(store.stream("stream-me")).data == data)
            // A range, clamped.
            let partial = try await store.stream("stream-me", range: 1000..<20_000, chunkSize: 333)
            #expect(partial.range == 1000..<10_007)
            let (read, sizes) = try await collect(partial)
            #expect(read == data.subdata(in: 1000..<10_007))
            #expect(sizes.allSatisfy { $0 > 0 && $0 <= 333 })
            // An empty blob and an empty range yield no bytes.
            try await store.put(Data(), identifier: "empty")
            #expect(try await collect(store.stream("empty", range: nil, chunkSize: 16)).data.isEmpty)
            #expect(try await collect(store.stream("stream-me", range: 50..<50, chunkSize: 16)).data.isEmpty)
            // An empty range may start at the very end, not past it.
            #expect(try await collect(store.stream("stream-me", range: 10_007..<10_007, chunkSize: 16)).data.isEmpty)
            await #expect(throws: BlobStoreError.rangeNotSatisfiable(store: store.name, identifier: "stream-me", size: 10_007)) {
                try await store.stream("stream-me", range: 10_008..<10_008, chunkSize: 16)
            }
        }
    }

    @Test("a stream reads the version current when it was opened", arguments: StoreKind.allCases)
    func streamSnapshot(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let old = pseudoRandomBytes(50_000, seed: 21)
            let oldMetadata = try await store.put(old, identifier: "doc")
            let stream = try await store.stream("doc", range: nil, chunkSize: 1000)
            var iterator = stream.makeAsyncIterator()
            var read = try #require(try await iterator.next())
            // Replace, then remove, while the stream is half read.
            try await store.put(pseudoRandomBytes(60_000, seed: 22), identifier: "doc")
            while let chunk = try await iterator.next() { read.append(chunk) }
            #expect(read == old)
            #expect(kind.sameStreamMetadata(stream.metadata, oldMetadata), "\(stream.metadata) vs \(oldMetadata)")

            let second = try await store.stream("doc", range: nil, chunkSize: 1000)
            try await store.remove("doc")
            #expect(try await collect(second).data == pseudoRandomBytes(60_000, seed: 22))
        }
    }

    @Test("a put from an async sequence of chunks stores their concatenation", arguments: StoreKind.allCases)
    func streamedPut(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let whole = pseudoRandomBytes(700_000, seed: 5)
            var chunks: [Data] = [Data()]
            var offset = 0
            for size in [1, 0, 4095, 65_536, 100_000, 0, 3] {
                chunks.append(whole.subdata(in: offset..<offset + size))
                offset += size
            }
            chunks.append(whole.subdata(in: offset..<whole.count))
            let metadata = try await store.put(
                chunks: chunkStream(chunks), identifier: "streamed", options: PutOptions(userMetadata: ["source": "chunks"]))
            #expect(metadata.size == Int64(whole.count))
            #expect(metadata.etag == expectedETag(whole))
            #expect(metadata.contentType == "application/octet-stream")
            #expect(metadata.userMetadata == ["source": "chunks"])
            #expect(try await store.get("streamed") == whole)
            #expect(try await store.head("streamed") == metadata)
            // No chunks at all is an empty blob; a nil identifier gets a UUID.
            let empty = try await store.put(chunks: chunkStream([]), identifier: nil, options: PutOptions())
            #expect(empty.size == 0)
            #expect(UUID(uuidString: empty.identifier) != nil)
            #expect(try await store.get(empty.identifier) == Data())
            // Record validation sees the whole streamed document.
            let json = Data("{\"list\": [1, 2, 3], \"name\": \"streamed\"}".utf8)
            let record = try await store.put(
                chunks: chunkStream([json.prefix(5), json.dropFirst(5)].map { Data($0) }), identifier: "record",
                options: PutOptions(validation: .record))
            #expect(record.contentType == "application/json")
            await #expect(throws: BlobStoreError.self) {
                try await store.put(chunks: chunkStream([json.prefix(5)].map { Data($0) }), identifier: "half", options: PutOptions(validation: .record))
            }
            #expect(try await store.exists("half") == false)
        }
    }

    @Test("a chunk sequence that throws stores nothing", arguments: StoreKind.allCases)
    func failingChunks(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            await #expect(throws: ChunkSourceFailure()) {
                try await store.put(chunks: failingChunkStream([Data("partial".utf8), Data(count: 100_000)]), identifier: "new", options: PutOptions())
            }
            #expect(try await store.exists("new") == false)
            let original = try await store.put(Data("original".utf8), identifier: "existing")
            await #expect(throws: ChunkSourceFailure()) {
                try await store.put(chunks: failingChunkStream([Data("replacement".utf8)]), identifier: "existing", options: PutOptions())
            }
            await #expect(throws: ChunkSourceFailure()) {
                try await store.put(chunks: failingChunkStream([]), identifier: "existing", options: PutOptions(condition: .ifMatch(original.etag)))
            }
            #expect(try await store.get("existing") == Data("original".utf8))
            #expect(try await store.head("existing") == original)
            #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 8))
            #expect(try await store.listAll().map(\.identifier) == ["existing"])
        }
    }

    @Test("a put from a file stores its exact contents", arguments: StoreKind.allCases)
    func putFromFile(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let directory = TempFolder()
            let source = directory.file("source.bin")
            let data = pseudoRandomBytes(1_234_567, seed: 9)
            try data.write(to: source)
            let metadata = try await store.put(contentsOf: source, identifier: "from-file", options: PutOptions(contentType: "application/x-test"))
            #expect(metadata.size == Int64(data.count))
            #expect(metadata.etag == expectedETag(data))
            #expect(metadata.contentType == "application/x-test")
            #expect(try await store.get("from-file") == data)
            #expect(try Data(contentsOf: source) == data, "the source file is left alone")
            // An image file is recognised.
            let png = directory.file("pic.png")
            try minimalPNG(width: 8, height: 8).write(to: png)
            let image = try await store.put(contentsOf: png, identifier: "pic", options: PutOptions(validation: .image))
            #expect(image.image?.width == 8)
            #expect(image.contentType == "image/png")
            // An empty file is an empty blob.
            let empty = directory.file("empty")
            try Data().write(to: empty)
            #expect(try await store.put(contentsOf: empty, identifier: "empty", options: PutOptions()).size == 0)
            // A missing file stores nothing.
            let missing = directory.file("missing")
            await #expect(throws: BlobStoreError.io(operation: "open", path: missing.path, errno: .noSuchFileOrDirectory)) {
                try await store.put(contentsOf: missing, identifier: "missing", options: PutOptions())
            }
            #expect(try await store.exists("missing") == false)
            #expect(try await store.statistics().count == 3)
        }
    }
}
