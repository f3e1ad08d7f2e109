import BlobSystem
import Foundation
import Testing

@testable import BlobStore

/// Syncs that fail, made to fail through ``FileSystemSeam``: a put is never acknowledged unless its
/// syncs succeeded, and its error names the path and the errno.
@Suite(.serialized)
struct SyncFailureTests {
    /// Runs `body` with a recorder installed on `root`, then uninstalls it.
    private func recording<T>(_ root: String, _ body: (MutationRecorder) async throws -> T) async throws -> T {
        let recorder = MutationRecorder(root: root)
        FileSystemSeam.install(recorder)
        defer { FileSystemSeam.uninstall(recorder) }
        return try await body(recorder)
    }

    private func isIOError(_ error: any Error, operation: String, pathContains part: String, errno code: Int32) -> Bool {
        guard case .io(let op, let path, let errno) = error as? BlobStoreError else { return false }
        return op == operation && path.contains(part) && errno.rawValue == code
    }

    /// An `fdatasync` of a put's content that fails with EIO fails that put (naming its temp file and
    /// EIO) and only that one; nothing is stored under its name.
    @Test func aFailedContentSyncFailsThatPutOnly() async throws {
        let root = TemporaryRoot()
        try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
        try await recording(root.path) { recorder in
            let store = try PersistentDataStore(name: "eio", root: root.url, configuration: StoreConfiguration(durability: .durable))
            try await store.put(Data("before".utf8), identifier: "victim")
            // The content of whatever holds "doomed" fails to sync.
            recorder.failCalls { call, path in
                guard case .dataSync = call, path.contains("/tmp/put-") else { return nil }
                let content = (try? String(contentsOfFile: path, encoding: .isoLatin1)) ?? ""
                return content.contains("doomed") ? Errno(rawValue: EIO) : nil
            }
            async let healthy: BlobMetadata = store.put(Data("fine".utf8), identifier: "healthy")
            do {
                try await store.put(Data("doomed".utf8), identifier: "victim")
                Issue.record("a put whose content sync failed was acknowledged")
            } catch {
                #expect(isIOError(error, operation: "sync", pathContains: "/eio/tmp/put-", errno: EIO), "\(error)")
                #expect("\(error)".contains("EIO"))
            }
            _ = try await healthy
            recorder.failCalls(nil)
            #expect(try await store.get("victim") == Data("before".utf8))
            #expect(try await store.get("healthy") == Data("fine".utf8))
            #expect(try await store.verify().isClean)
        }
    }

    /// A folder `fsync` that fails after the rename fails the put: it is not acknowledged, and the
    /// error names the bucket folder and the errno.
    @Test func aFailedFolderSyncFailsThePut() async throws {
        let root = TemporaryRoot()
        try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
        try await recording(root.path) { recorder in
            let store = try PersistentDataStore(name: "dir-eio", root: root.url, configuration: StoreConfiguration(durability: .durable))
            recorder.failCalls { call, path in
                guard case .sync = call, path.hasSuffix("/dir-eio/b/1") else { return nil }
                return Errno(rawValue: EIO)
            }
            await #expect {
                try await store.put(Data("x".utf8), identifier: "x")
            } throws: { error in
                isIOError(error, operation: "sync folder", pathContains: "/dir-eio/b/1", errno: EIO)
            }
            recorder.failCalls(nil)
            try await store.put(Data("y".utf8), identifier: "y")
        }
    }

    /// A file system that refuses syncs (EINVAL) is named when the store opens (``PersistentDataStore/syncWarning``);
    /// durable puts there fail with that errno instead of being acknowledged, and relaxed puts of new blobs still work.
    @Test func aFileSystemThatRefusesSyncsIsReportedAtOpen() async throws {
        let root = TemporaryRoot()
        try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
        do {
            let healthy = try PersistentDataStore(name: "nosync", root: root.url)
            #expect(healthy.syncWarning == nil)
        }
        #expect(waitForStoreUnlocked(root.path + "/nosync"))
        try await recording(root.path) { recorder in
            recorder.failCalls { call, _ in
                switch call {
                case .sync, .dataSync: return Errno(rawValue: EINVAL)
                default: return nil
                }
            }
            let store = try PersistentDataStore(name: "nosync", root: root.url, configuration: StoreConfiguration(durability: .durable))
            let warning = try #require(store.syncWarning)
            #expect(warning.contains("EINVAL") && warning.contains("/nosync") && warning.contains("does not honour syncs"), "\(warning)")
            await #expect {
                try await store.put(Data("x".utf8), identifier: "x")
            } throws: { error in
                isIOError(error, operation: "sync", pathContains: "/nosync/tmp/put-", errno: EINVAL)
            }
            #expect(try await store.exists("x") == false)
            let relaxed = try PersistentDataStore(name: "nosync", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
            try await relaxed.put(Data("y".utf8), identifier: "y")
            #expect(try await relaxed.get("y") == Data("y".utf8))
        }
    }

    /// A relaxed put syncs its content before a rename that replaces a blob, and makes no sync for a new blob.
    @Test func aRelaxedPutSyncsOnlyWhenItReplaces() async throws {
        let root = TemporaryRoot()
        try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
        try await recording(root.path) { recorder in
            let store = try PersistentDataStore(name: "relaxed", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
            let start = recorder.entries.count
            try await store.put(Data("new".utf8), identifier: "blob")
            let created = recorder.entries[start...]
            #expect(!created.contains { if case .call(.dataSync) = $0 { true } else { false } }, "a new blob costs no sync")
            let middle = recorder.entries.count
            try await store.put(Data("replacement".utf8), identifier: "blob")
            let replaced = Array(recorder.entries[middle...])
            let sync = replaced.firstIndex { if case .call(.dataSync) = $0 { true } else { false } }
            let rename = replaced.firstIndex { entry in
                if case .call(.rename(_, let to)) = entry { to.hasSuffix("/relaxed/b/1/blob") } else { false }
            }
            #expect(sync != nil && rename != nil && sync! < rename!, "content synced before the rename that replaces")
            #expect(try await store.get("blob") == Data("replacement".utf8))
        }
    }
}
