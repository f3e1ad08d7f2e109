import BlobSystem
import Foundation
import Testing

@testable import BlobStore

/// Opening a store whose `.lock` another process holds: wait up to `lockWait`, never for blobd.
@Suite struct LockWaitTests {
    let root = TemporaryRoot()

    /// Takes `ROOT/NAME/.lock` as another process would (its own open file, so its own `flock`).
    func holdLock(_ name: String, saying text: String) throws -> FileDescriptor {
        try FileManager.default.createDirectory(at: root.url.appendingPathComponent(name), withIntermediateDirectories: true)
        let descriptor = try FileDescriptor.open(root.url.path + "/" + name + "/.lock", [.readWrite, .create], permissions: 0o644)
        #expect(try descriptor.lock(exclusive: true, nonBlocking: true))
        try Array(text.utf8).withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: 0, $0) }
        return descriptor
    }

    @Test func withoutAWaitAHeldStoreFailsAtOnceNamingTheHolder() throws {
        let held = try holdLock("held", saying: "pid 4194301\n")
        defer { try? held.close() }
        #expect(throws: BlobStoreError.storeLocked(path: root.url.path + "/held/.lock", holder: "pid 4194301")) {
            try PersistentDataStore(name: "held", root: root.url)
        }
    }

    @Test func anOpenWaitsForTheHolderToLetGo() async throws {
        let held = try holdLock("turns", saying: "pid 4194301\n")
        // Let go only after the opener has certainly found the lock taken and started waiting.
        let release = Thread { Thread.sleep(forTimeInterval: 0.3); try? held.close() }
        release.start()
        let url = root.url
        let store = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try PersistentDataStore(name: "turns", root: url, configuration: StoreConfiguration(lockWait: .seconds(600))) })
            }
        }
        try await store.put(Data("mine".utf8), identifier: "a")
        #expect(try await store.get("a") == Data("mine".utf8))
        let text = try String(contentsOfFile: root.url.path + "/turns/.lock", encoding: .utf8)
        #expect(text == "pid \(getpid())\n")
    }

    @Test func anOpenDoesNotWaitForBlobd() throws {
        let held = try holdLock("served", saying: "pid 4194302\n")
        defer { try? held.close() }
        _ = FileManager.default.createFile(atPath: root.url.path + "/.blobd.lock", contents: Data("pid 4194302\n".utf8))
        // A wait of a day: the open returns only because it does not wait for a daemon.
        #expect(throws: BlobStoreError.storeLocked(path: root.url.path + "/served/.lock", holder: "blobd, pid 4194302")) {
            try PersistentDataStore(name: "served", root: root.url, configuration: StoreConfiguration(lockWait: .seconds(86_400)))
        }
    }
}
