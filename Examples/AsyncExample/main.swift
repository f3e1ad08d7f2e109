// async/await with change events: one task watches the store while others write to it,
// as a Core Data context posts change notifications.
//
//   swift run async-example
import BlobStore
import Foundation

@main
struct AsyncExample {
    static func main() async throws {
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("blobstore-async-example-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        // Swap this line for `try InMemoryBlobStore()` and everything below works the same.
        let store: any BlobStoring = try PersistentDataStore(name: "events", root: root)

        let changes = store.changes()
        let watcher = Task {
            var seen = 0
            for await change in changes {
                switch change.kind {
                case .put(let metadata): print("#\(change.sequence) put \(metadata.identifier) etag \(metadata.etag)")
                case .removed(let identifier): print("#\(change.sequence) removed \(identifier)")
                case .removedAll: print("#\(change.sequence) removed all")
                }
                seen += 1
                if seen == 12 { break }
            }
        }

        // Ten concurrent writers; durable puts that arrive together share their syncs.
        try await withThrowingTaskGroup(of: BlobMetadata.self) { group in
            for i in 0..<10 {
                group.addTask { try await store.put(Data("message \(i)".utf8), identifier: "inbox/\(i)") }
            }
            for try await _ in group {}
        }
        // Compare-and-swap: replace only if nobody changed it since we read it.
        let current = try await store.head("inbox/0")
        try await store.put(Data("edited".utf8), identifier: "inbox/0", options: PutOptions(condition: .ifMatch(current.etag)))
        do {
            try await store.put(Data("stale".utf8), identifier: "inbox/0", options: PutOptions(condition: .ifMatch(current.etag)))
        } catch {
            print("stale write refused: \(error)")
        }
        try await store.remove("inbox/1")
        await watcher.value

        // Stream a blob in chunks.
        var bytes = 0
        for try await chunk in try await store.stream("inbox/0", range: nil, chunkSize: 2) { bytes += chunk.count }
        print("streamed \(bytes) bytes; \(try await store.statistics().count) blobs left")
    }
}
