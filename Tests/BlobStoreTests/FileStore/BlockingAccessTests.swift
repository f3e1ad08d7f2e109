import BlobSystem
import Foundation
import Testing

@testable import BlobStore

@Suite struct BlockingAccessTests {
    let root = TemporaryRoot()

    @Test func uploadInPiecesThenReadThroughAHandleThatPinsItsVersion() async throws {
        let store = try PersistentDataStore(name: "blocking", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        let upload = try store.beginUpload(identifier: "doc", options: PutOptions(contentType: "text/plain"))
        for piece in ["hello ", "blocking ", "world"] {
            try Array(piece.utf8).withUnsafeBytes { try upload.append($0) }
        }
        #expect(try await store.exists("doc") == false)
        let metadata: BlobMetadata = try await withCheckedThrowingContinuation { continuation in
            upload.commit { continuation.resume(with: $0) }
        }
        #expect(metadata.size == 20)
        #expect(metadata.contentType == "text/plain")

        let handle = try store.openForReading("doc")
        defer { handle.close() }
        #expect(handle.metadata == metadata)
        #expect(try handle.read(6..<14) == Data("blocking".utf8))
        #expect(try handle.read(15..<100) == Data("world".utf8))
        // A later put does not change what the open handle reads.
        try await store.put(Data("replaced".utf8), identifier: "doc")
        #expect(try handle.read(0..<5) == Data("hello".utf8))
        var buffer = [UInt8](repeating: 0, count: 5)
        _ = try buffer.withUnsafeMutableBytes { try handle.fileDescriptor.readFully(fromAbsoluteOffset: handle.contentOffset, into: $0) }
        #expect(buffer == Array("hello".utf8))
    }

    @Test func cancelledUploadLeavesNothing() async throws {
        let store = try PersistentDataStore(name: "blocking", root: root.url)
        let upload = try store.beginUpload(identifier: "gone", options: PutOptions())
        try Array(repeating: UInt8(1), count: 300_000).withUnsafeBytes { try upload.append($0) }
        upload.cancel()
        #expect(try await store.exists("gone") == false)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try DirectoryStream.entries(of: store.folderURL.path + "/tmp").isEmpty)
    }

    @Test func removeWithCompletionReportsExistenceAndConditions() async throws {
        let store = try PersistentDataStore(name: "blocking", root: root.url)
        let metadata = try await store.put(Data("x".utf8), identifier: "r")
        let wrong: Result<Bool, any Error> = await withCheckedContinuation { continuation in
            store.remove("r", condition: .ifMatch(ETag(checksum: 1))) { continuation.resume(returning: $0) }
        }
        #expect(throws: BlobStoreError.preconditionFailed(store: "blocking", identifier: "r", expected: ETag(checksum: 1), actual: metadata.etag)) {
            try wrong.get()
        }
        let removed: Result<Bool, any Error> = await withCheckedContinuation { continuation in
            store.remove("r", condition: .ifMatch(metadata.etag)) { continuation.resume(returning: $0) }
        }
        #expect(try removed.get())
        #expect(throws: BlobStoreError.notFound(store: "blocking", identifier: "r")) { try store.openForReading("r") }
    }
}

@Suite struct ChangeObserverTests {
    let root = TemporaryRoot()

    @Test func observersSeeEachChangeBeforeItIsAcknowledged() async throws {
        let store = try PersistentDataStore(name: "observed", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        let seen = Locked<[BlobChange.Kind]>([])
        store.observeChanges { change in seen.withLock { $0.append(change.kind) } }
        let metadata = try await store.put(Data("x".utf8), identifier: "a")
        // No waiting: the observer ran before the put returned.
        #expect(seen.withLock { $0 } == [.put(metadata)])
        try await store.remove("a")
        try await store.removeAll()
        #expect(seen.withLock { $0 } == [.put(metadata), .removed(identifier: "a"), .removedAll])
    }
}
