// The README's library quick start, compiled and run by CI: everything after this header is the
// README's code block, character for character (DocExampleTests compares them).
//
//   swift run quick-start        # any number of times, with or without blobd running

import BlobClient
import BlobStore
import Foundation

// A store is a folder under a root (default: $XDG_DATA_HOME/blobstore or ~/.local/share/blobstore).
// One process at a time has a store open, and blobd keeps open the stores it has been asked for:
// BlobStores.open opens the store in this process, or reaches it through the blobd that has it
// open, with the same API either way (docs/CLIENT.md, "Opening a store on this machine").
let store: any ArticleDataStoring
do {
    store = try BlobStores.open("quick-start")
} catch let error as BlobStoreError {
    print(error)   // …/quick-start/.lock is in use by another process (pid 4242); wait for it to finish, or stop it
    exit(1)
}
print(store is RemoteBlobStore ? "through blobd" : "in this process")

// Put and get bytes. The identifier is optional (a new UUID string when absent).
let metadata = try await store.put(Data("hello".utf8), identifier: "notes/hello.txt", contentType: "text/plain")
print(metadata.etag, metadata.size)                                // checksum-derived ETag, 5
let bytes = try await store.get("notes/hello.txt")                 // "hello"
let part = try await store.get("notes/hello.txt", range: 1..<3)    // "el"
print(String(decoding: bytes, as: UTF8.self), String(decoding: part, as: UTF8.self))

// Images: refused unless the bytes are a recognised image; format and pixel size are recorded.
let pngData = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR42mP4z8AAQQxwFgBB0gX7b/EWxwAAAABJRU5ErkJggg==")!
let image = try await store.putImage(pngData, identifier: "cats/tom.png")
let info = image.image!
print(info.format, info.width, info.height)                        // png 3 2

// Records: Codable values as JSON.
struct Profile: Codable { var name: String }
try await store.storeRecord(Profile(name: "Tom"), identifier: "profiles/tom")
let profile = try await store.loadRecord(Profile.self, identifier: "profiles/tom")
print(profile.name)                                                // Tom

// Compare-and-swap: replace only the version you read. Create-only: fails if the blob exists.
try await store.put(Data("hello, world".utf8), identifier: "notes/hello.txt", options: PutOptions(condition: .ifMatch(metadata.etag)))
do {
    try await store.put(Data("first".utf8), identifier: "notes/once", options: PutOptions(condition: .ifNoneMatch))
} catch BlobStoreError.preconditionFailed {
    print("notes/once exists already (this is not the first run)")
}

// Large blobs stream both ways without being held in memory.
let file = FileManager.default.temporaryDirectory.appendingPathComponent("quick-start-video.bin")
try Data(repeating: 0x2A, count: 3_000_000).write(to: file)
try await store.put(contentsOf: file, identifier: "video", options: PutOptions(contentType: "video/mp4"))
try FileManager.default.removeItem(at: file)                       // the store has its own copy
var received = 0
for try await chunk in try await store.stream("video") { received += chunk.count }   // 256 KiB chunks
print("streamed", received, "bytes")

// List like a Core Data fetch request: prefix, content-type filter, sort, limit, cursor.
let page = try await store.list(ListQuery(prefix: "cats/", contentTypePrefix: "image/", limit: 100))
print(page.items.map(\.identifier))                                // ["cats/tom.png"]
// … pass page.nextCursor as the next query's cursor.

// Watch changes, as Core Data posts change notifications. The stream is subscribed when
// subscribeToChanges() returns (through blobd too) and sees every later change; this one takes the
// next two. (A watcher for the life of an app loops in a Task, and cancelling the Task ends the loop.)
let changes = try await store.subscribeToChanges()
try await store.remove("video")
try await store.put(Data("hello again".utf8), identifier: "notes/hello.txt", contentType: "text/plain")
for await change in changes.prefix(2) {
    switch change.kind {
    case .put(let blob): print(change.sequence, "put", blob.identifier, blob.size)
    case .removed(let identifier): print(change.sequence, "removed", identifier)
    case .removedAll: print(change.sequence, "removed all")
    }
}
