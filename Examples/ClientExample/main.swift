// One piece of code, two stores: the embedded PersistentDataStore or blobd through BlobClient.
// Only the line that creates the store differs.
//
//   swift run client-example              # embedded store in a temp folder
//   swift run client-example --daemon     # the running blobd (start `swift run blobd`); its default
//                                         # socket, or $BLOB_SOCKET
import BlobClient
import BlobStore
import Foundation

/// Works on any store: the embedded one, the in-memory one, or the daemon's.
func tour(_ store: any BlobStoring) async throws {
    // Subscribed when this returns, on the embedded store and through the daemon alike.
    let changes = try await store.subscribeToChanges()
    let watcher = Task {
        var seen: [String] = []
        for await change in changes {
            switch change.kind {
            case .put(let metadata): seen.append("put \(metadata.identifier)")
            case .removed(let identifier): seen.append("removed \(identifier)")
            case .removedAll: seen.append("removed all")
            }
            if seen.count == 3 { break }
        }
        return seen
    }

    let note = try await store.put(Data("hello from \(type(of: store))".utf8), identifier: "notes/hello.txt", contentType: "text/plain")
    print("put \(note.identifier): \(note.size) bytes, ETag \(note.etag)")

    struct Settings: Codable { var theme: String; var fontSize: Int }
    try await store.storeRecord(Settings(theme: "dark", fontSize: 14), identifier: "settings/ui")
    print("record back:", try await store.loadRecord(Settings.self, identifier: "settings/ui"))

    // Compare-and-swap: only replace what we last saw.
    do {
        try await store.put(Data("stale".utf8), identifier: "notes/hello.txt", options: PutOptions(condition: .ifMatch(ETag(checksum: 42))))
    } catch let error as BlobStoreError {
        print("refused as expected:", error)
    }

    let page = try await store.list(ListQuery(prefix: "notes/"))
    print("listed:", page.items.map(\.identifier))
    print("get:", String(decoding: try await store.get("notes/hello.txt"), as: UTF8.self))
    try await store.remove("notes/hello.txt")
    // Three changes were made; stop waiting after a second even if one went missing.
    let timeout = Task {
        try await Task.sleep(for: .seconds(1))
        watcher.cancel()
    }
    print("events seen:", await watcher.value)
    timeout.cancel()
}

@main
struct ClientExample {
    static func main() async {
        do {
            let store: any BlobStoring
            if CommandLine.arguments.contains("--daemon") {
                store = try BlobClient().store("client-example")     // the daemon
            } else {
                let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("blobstore-client-example-\(getpid())")
                store = try PersistentDataStore(name: "client-example", root: root)   // embedded
            }
            try await tour(store)
            try await store.removeAll()
        } catch {
            print("error:", error)
            exit(1)
        }
    }
}
