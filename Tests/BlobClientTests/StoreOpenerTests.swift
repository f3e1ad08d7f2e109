import BlobStore
import BlobSystem
import Foundation
import Testing

@testable import BlobClient

#if canImport(Glibc)
import Glibc
#endif

/// `BlobStores.open`: in this process when the store is free, through the blobd that holds it
/// otherwise, and one sentence naming any other holder (docs/CLIENT.md, "Opening a store on this machine").
@Suite("BlobStores.open picks the embedded store or blobd")
struct StoreOpenerTests {
    /// Takes `ROOT/NAME/.lock` as another process would (its own open file, so its own `flock`).
    static func holdLock(root: String, _ name: String, saying text: String) throws -> FileDescriptor {
        try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
        let descriptor = try FileDescriptor.open(root + "/" + name + "/.lock", [.readWrite, .create], permissions: 0o644)
        #expect(try descriptor.lock(exclusive: true, nonBlocking: true))
        try Array(text.utf8).withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: 0, $0) }
        return descriptor
    }

    @Test func aRecordIsThePidLineAndTheSocketLine() {
        #expect(DaemonRecord.parse("pid 42\nsocket /run/user/1000/blobstore/blobd.sock\n")
            == DaemonRecord(pid: "pid 42", socket: "/run/user/1000/blobstore/blobd.sock"))
        #expect(DaemonRecord.parse("pid 42\nsocket /tmp/a b.sock\n") == DaemonRecord(pid: "pid 42", socket: "/tmp/a b.sock"))
        #expect(DaemonRecord.parse("pid 42\n") == DaemonRecord(pid: "pid 42", socket: nil))
        #expect(DaemonRecord.parse("pid 42\nsocket relative.sock\n") == DaemonRecord(pid: "pid 42", socket: nil))
        #expect(DaemonRecord.parse("") == nil)
    }

    @Test func aFreeStoreIsOpenedInThisProcess() async throws {
        let root = TemporaryRoot()
        let store = try BlobStores.open("free", root: root.url)
        let embedded = try #require(store as? PersistentDataStore)
        #expect(embedded.rootURL.path == root.url.standardizedFileURL.path)
        try await store.put(Data("here".utf8), identifier: "a")
        #expect(try await PersistentDataStore(name: "free", root: root.url).get("a") == Data("here".utf8))
    }

    @Test func aStoreHeldByAnotherProgramIsOneSentenceNamingIt() throws {
        let root = TemporaryRoot()
        let held = try Self.holdLock(root: root.url.path, "held", saying: "pid 4194301\n")
        defer { try? held.close() }
        let expected = BlobStoreError.storeLocked(path: root.url.path + "/held/.lock", holder: "pid 4194301")
        #expect(throws: expected) { try BlobStores.open("held", root: root.url) }
        #expect(expected.description == root.url.path + "/held/.lock is in use by another process (pid 4194301); wait for it to finish, or stop it")
    }

    @Test func aBlobdThatDoesNotSayWhereItListensIsNamedNotGuessed() throws {
        let root = TemporaryRoot()
        let held = try Self.holdLock(root: root.url.path, "served", saying: "pid 4194302\n")
        defer { try? held.close() }
        _ = FileManager.default.createFile(atPath: root.url.path + "/.blobd.lock", contents: Data("pid 4194302\n".utf8))
        #expect(throws: BlobStoreError.storeLocked(path: root.url.path + "/served/.lock", holder: "blobd, pid 4194302")) {
            try BlobStores.open("served", root: root.url)
        }
    }

    @Test(.enabled(if: DaemonFixture.binary != nil, "blobd not built"))
    func blobdRecordsItsSocketBesideItsPid() throws {
        let daemon = try DaemonProcess(logLevel: "error")
        let text = try String(contentsOfFile: daemon.root + "/.blobd.lock", encoding: .utf8)
        #expect(text == "pid \(daemon.process.processIdentifier)\nsocket \(daemon.socketPath)\n")
    }

    @Test(.enabled(if: DaemonFixture.binary != nil, "blobd not built"))
    func aStoreBlobdHasOpenIsReachedThroughBlobd() async throws {
        let daemon = try DaemonFixture()
        let served = try daemon.client().store("photos")
        try await served.put(Data("from blobd".utf8), identifier: "a")  // blobd opens the store and keeps it

        // $BLOB_SOCKET does not matter: the socket is the one the holding daemon recorded.
        let store = try BlobStores.open("photos", root: URL(fileURLWithPath: daemon.root))
        let remote = try #require(store as? RemoteBlobStore, "got \(type(of: store))")
        #expect(remote.client.socketPath == daemon.socketPath)
        #expect(remote.name == "photos")
        #expect(try await store.get("a") == Data("from blobd".utf8))
        try await store.put(Data("through the opener".utf8), identifier: "b")
        #expect(try await served.get("b") == Data("through the opener".utf8))

        // The article API, whichever store the opener returned.
        let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR42mP4z8AAQQxwFgBB0gX7b/EWxwAAAABJRU5ErkJggg==")!
        let queue = DispatchQueue(label: "handlers")
        store.storeImage(png, identifier: "cat", completionQueue: queue) { _ in }
        let image = await withCheckedContinuation { continuation in
            store.loadImage(forIdentifier: "cat", completionQueue: queue) { continuation.resume(returning: $0) }
        }
        #expect(image?.info.width == 3 && image?.info.height == 2)
    }

    @Test(.enabled(if: DaemonFixture.binary != nil, "blobd not built"))
    func aStoreBlobdHasNotOpenedIsOpenedInThisProcess() async throws {
        let daemon = try DaemonFixture()
        _ = try await daemon.client().health()
        let store = try BlobStores.open("mine", root: URL(fileURLWithPath: daemon.root))
        #expect(store is PersistentDataStore)
        try await store.put(Data("x".utf8), identifier: "x")
        // Meanwhile blobd refuses the store, naming this process.
        await #expect(throws: BlobStoreError.storeLocked(path: "store 'mine' (served by blobd)", holder: "pid \(getpid())")) {
            _ = try await daemon.client().store("mine").get("x")
        }
    }

    @Test(.enabled(if: DaemonFixture.binary != nil, "blobd not built"))
    func subscribingThroughBlobdSeesTheNextChange() async throws {
        let daemon = try DaemonFixture()
        let served = try daemon.client().store("feed")
        try await served.put(Data("open".utf8), identifier: "open")
        let store = try BlobStores.open("feed", root: URL(fileURLWithPath: daemon.root))
        #expect(store is RemoteBlobStore)
        for round in 0..<3 {
            let changes = try await store.subscribeToChanges()
            try await store.put(Data("\(round)".utf8), identifier: "n\(round)")
            var iterator = changes.makeAsyncIterator()
            let change = await iterator.next()
            guard case .put(let blob)? = change?.kind else {
                Issue.record("round \(round): expected the put, got \(String(describing: change))")
                return
            }
            #expect(blob.identifier == "n\(round)")
        }
    }

    @Test func subscribingToAnUnreachableBlobdSaysWhy() async throws {
        let folder = TempFolder()
        let store = try BlobClient(socketPath: folder.path + "/none.sock").store("s")
        await #expect {
            _ = try await store.subscribeToChanges()
        } throws: { error in
            guard case BlobClientError.daemonUnreachable(let path, _) = error else { return false }
            return path == folder.path + "/none.sock"
        }
    }

    @Test func subscribingToAnEmbeddedStoreIsItsChanges() async throws {
        let store: any BlobStoring = try InMemoryBlobStore(name: "m")
        let changes = try await store.subscribeToChanges()
        try await store.put(Data("1".utf8), identifier: "one")
        var iterator = changes.makeAsyncIterator()
        guard case .put(let blob)? = await iterator.next()?.kind else {
            Issue.record("no put")
            return
        }
        #expect(blob.identifier == "one")
    }
}
