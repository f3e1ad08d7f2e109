// docs/CLIENT.md's complete example, compiled and run by CI against a blobd: everything after this
// header is the document's code block, character for character (DocExampleTests compares them).
//
//   swift run blobd                  # in another terminal, or any running blobd
//   swift run client-quick-start     # blobd's default socket, or $BLOB_SOCKET when set

import BlobClient
import BlobStore
import Foundation

// Connect to blobd's default socket ($BLOB_SOCKET when set); nothing connects before the first call.
let client = BlobClient(configuration: BlobClient.Configuration(requestTimeout: .seconds(10), poolSize: 4))
do {
    _ = try await client.health()
} catch let error as BlobClientError {
    print(error)   // cannot connect to blobd at …/blobd.sock: ENOENT …; blobd may not be running …
    exit(1)
}
let store = try client.store("client-quick-start")   // created on the daemon by its first put

// Watch the store. blobd starts a feed when it receives the feed's request, and does not deliver
// what was committed before: subscribeToChanges() returns once blobd has answered it, so every
// change committed from then on arrives, in commit order.
let feed = try await store.subscribeToChanges()

// A record and an image, as on the embedded store.
struct Profile: Codable { var name: String; var lives: Int }
let record = try await store.storeRecord(Profile(name: "Tom", lives: 9), identifier: "profiles/tom")
print("stored", record.identifier, record.size, "bytes, ETag", record.etag)
print(try await store.loadRecord(Profile.self, identifier: "profiles/tom"))
let pngData = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR42mP4z8AAQQxwFgBB0gX7b/EWxwAAAABJRU5ErkJggg==")!
let image = try await store.putImage(pngData, identifier: "cats/tom.png")
print("stored", image.identifier, image.image!.format, image.image!.width, image.image!.height)   // png 3 2

// List: prefix, content-type filter, sort, limit and cursor, as on the embedded store.
let page = try await store.list(ListQuery(prefix: "cats/", contentTypePrefix: "image/", limit: 100))
for blob in page.items { print(blob.identifier, blob.contentType, blob.size, "bytes") }

// Errors: the embedded store's BlobStoreError where one fits, with the same cases and payloads.
do {
    try await store.putImage(Data("<html>".utf8), identifier: "cats/felix.png")
} catch BlobStoreError.notAnImage(_, let identifier, let reason) {
    print("refused \(identifier): \(reason)")
}
do {
    try await store.put(Data("again".utf8), identifier: "profiles/tom", options: PutOptions(condition: .ifNoneMatch))
} catch BlobStoreError.preconditionFailed(_, let identifier, _, let actual) {
    print("\(identifier) exists already, ETag \(actual?.description ?? "none")")
}
do {
    _ = try await store.get("cats/felix.png")
} catch let error as BlobStoreError {
    print(error)   // blob 'cats/felix.png' not found in store 'client-quick-start'
} catch let error as BlobClientError {
    print(error)   // timeouts, broken connections, and codes no BlobStoreError case stands for
}

// The article's completion-handler API: calls take effect in the order they are made, and the
// handlers run on the queue you pass (the main queue by default).
let handlers = DispatchQueue(label: "handlers")
store.storeData({ Data("stored the article's way".utf8) }, identifier: "notes/article", completionQueue: handlers) { result in
    print("storeData:", result)
}
// Made without waiting for storeData's handler, and still loads what it stored.
let text = await withCheckedContinuation { continuation in
    store.loadData(forIdentifier: "notes/article", dataTransformer: { String(decoding: $0, as: UTF8.self) }, completionQueue: handlers) {
        continuation.resume(returning: $0)
    }
}
print("loadData:", text ?? "nothing")

try await store.remove("cats/tom.png")

// The changes since the subscription, up to that remove.
for await change in feed {
    switch change.kind {
    case .put(let blob): print("change", change.sequence, "put", blob.identifier)
    case .removed(let identifier): print("change", change.sequence, "removed", identifier)
    case .removedAll: print("change", change.sequence, "removed all")
    }
    if case .removed(identifier: "cats/tom.png") = change.kind { break }
}
