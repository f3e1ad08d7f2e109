import BlobSystem
import Foundation
import Testing

@testable import BlobStore

#if canImport(Glibc)
import Glibc
#endif

/// A blob whose file cannot be reached (its bucket folder replaced by a symbolic link to itself:
/// every open under it fails with `ELOOP`, as a dead mount fails with `ENOTCONN`) is not absent:
/// get, head, remove and conditional puts report an I/O error naming the errno and the path, and
/// leave the file alone.
@Suite struct UnreachableBlobTests {
    let root = TemporaryRoot()

    func expectLoopError(_ error: any Error, under folder: String, _ comment: Comment) {
        guard case BlobStoreError.io(_, let path, let errno) = error else {
            Issue.record("expected an I/O error, got \(error); \(comment)")
            return
        }
        #expect(errno.rawValue == ELOOP, comment)
        #expect(path.hasPrefix(folder + "/"), "\(path); \(comment)")
        #expect("\(error)".contains(path), comment)
    }

    @Test(arguments: [true, false], [Durability.relaxed, .durable])
    func unreachableBlobIsAnErrorNotAbsent(inline: Bool, durability: Durability) async throws {
        let store = try PersistentDataStore(
            name: "u", root: root.url, configuration: StoreConfiguration(durability: durability, inlineCachedReads: inline))
        try await store.put(Data("kept".utf8), identifier: "blob")
        let folder = store.core.queue.sync { store.core.locate("blob").folder }
        let moved = folder + ".moved"
        #expect(rename(folder, moved) == 0)
        #expect(symlink(URL(fileURLWithPath: folder).lastPathComponent, folder) == 0)

        for (name, operation) in [
            ("get", { _ = try await store.get("blob") }),
            ("ranged get", { _ = try await store.get("blob", range: 0..<1) }),
            ("stream", { _ = try await store.stream("blob", range: nil, chunkSize: 10) }),
            ("head", { _ = try await store.head("blob") }),
            ("exists", { _ = try await store.exists("blob") }),
            ("remove", { _ = try await store.remove("blob", condition: .none) }),
            ("conditional remove", { _ = try await store.remove("blob", condition: .ifMatch(ETag(checksum: 1))) }),
            ("put", { _ = try await store.put(Data("new".utf8), identifier: "blob") }),
            ("put if absent", { _ = try await store.put(Data("new".utf8), identifier: "blob", options: PutOptions(condition: .ifNoneMatch)) }),
            ("blocking open", { _ = try store.openForReading("blob") }),
        ] as [(String, () async throws -> Void)] {
            do {
                try await operation()
                Issue.record("\(name) succeeded on an unreachable blob")
            } catch { expectLoopError(error, under: folder, "\(name), inline \(inline), \(durability)") }
        }
        let removed: Bool? = await withCheckedContinuation { continuation in
            store.remove("blob", condition: .none) { result in continuation.resume(returning: try? result.get()) }
        }
        #expect(removed == nil, "the callback remove reported an unreachable blob as \(String(describing: removed))")

        // Nothing was removed: the blob is back once its folder is.
        #expect(unlink(folder) == 0)
        #expect(rename(moved, folder) == 0)
        #expect(try await store.get("blob") == Data("kept".utf8))
    }
}
