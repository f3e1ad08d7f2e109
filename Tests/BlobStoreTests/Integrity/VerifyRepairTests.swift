import BlobSystem
import Foundation
import Testing

@testable import BlobStore

/// `verify(repair: true)` moves every corrupt and orphaned entry into `quarantine/`, byte-exact,
/// leaves healthy blobs alone, keeps the totals right, and is refused by a read-only engine.
@Suite struct VerifyRepairTests {
    let root = TemporaryRoot()

    @Test func repairQuarantinesDamagedAndStrayEntries() async throws {
        let store = try PersistentDataStore(name: "r", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        try await store.put(Data("kept".utf8), identifier: "kept")
        try await store.put(Data(repeating: 7, count: 4096), identifier: "damaged")
        #expect(try await store.statistics().count == 2)
        let folder = store.folderURL.path
        let (bucket, damagedPath) = store.core.queue.sync { (store.core.locate("kept").folder, store.core.path(of: "damaged")) }

        // Damage the content (the last byte), and put strays at every level.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: damagedPath))
        let end = try handle.seekToEnd()
        try handle.seek(toOffset: end - 1)
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        let damagedBytes = try Data(contentsOf: URL(fileURLWithPath: damagedPath))
        let strays = [folder + "/notes.txt": Data("top".utf8), folder + "/b/stray": Data("in b".utf8), bucket + "/%zz": Data("in bucket".utf8)]
        for (path, bytes) in strays { #expect(FileManager.default.createFile(atPath: path, contents: bytes)) }
        try FileManager.default.createDirectory(atPath: folder + "/extra", withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: folder + "/extra/inside", contents: Data("deep".utf8)))

        let report = try await store.verify(repair: true)
        #expect(report.healthy == 1)
        #expect(report.corrupt.map(\.path) == [damagedPath])
        #expect(Set(report.orphaned.map(\.path)) == Set(Array(strays.keys) + [folder + "/extra"]))
        let moved = try #require(report.quarantined)
        #expect(Set(moved.map(\.from)) == Set(Array(strays.keys) + [folder + "/extra", damagedPath]))
        #expect(Set(moved.map(\.to)).count == moved.count)
        for entry in moved {
            #expect(entry.to.hasPrefix(folder + "/quarantine/"), "\(entry)")
            #expect(!FileManager.default.fileExists(atPath: entry.from), "\(entry.from) is still there")
            // The name keeps the path relative to the store folder, escaped.
            let relative = String(entry.from.dropFirst(folder.count + 1))
            #expect(entry.to.hasSuffix("-" + StoreCore.escapedForQuarantine(relative)), "\(entry)")
        }
        func quarantined(_ path: String) throws -> Data {
            try Data(contentsOf: URL(fileURLWithPath: try #require(moved.first { $0.from == path }).to))
        }
        for (path, bytes) in strays { #expect(try quarantined(path) == bytes) }
        #expect(try quarantined(damagedPath) == damagedBytes)
        let extra = try #require(moved.first { $0.from == folder + "/extra" }).to
        #expect(try Data(contentsOf: URL(fileURLWithPath: extra + "/inside")) == Data("deep".utf8))

        // Now clean (quarantine/ is part of the layout), the healthy blob untouched, the totals right.
        let after = try await store.verify()
        #expect(after.isClean, "\(after)")
        #expect(after.healthy == 1 && after.quarantined == nil)
        #expect(try await store.get("kept") == Data("kept".utf8))
        #expect(try await store.statistics() == StoreStatistics(count: 1, bytes: 4))
        await #expect(throws: BlobStoreError.self) { try await store.get("damaged") }
        try await store.put(Data("again".utf8), identifier: "damaged")
        #expect(try await store.get("damaged") == Data("again".utf8))
        #expect(try await store.statistics() == StoreStatistics(count: 2, bytes: 9))

        // A later repair moves only the new stray, under a name that does not collide with earlier ones.
        #expect(FileManager.default.createFile(atPath: folder + "/notes.txt", contents: Data("second".utf8)))
        let second = try await store.verify(repair: true)
        let again = try #require(second.quarantined)
        #expect(again.count == 1 && !moved.map(\.to).contains(again[0].to))
        #expect(try Data(contentsOf: URL(fileURLWithPath: again[0].to)) == Data("second".utf8))
        #expect(try quarantined(folder + "/notes.txt") == Data("top".utf8))
    }

    @Test func aFileNamedQuarantineIsQuarantinedToo() async throws {
        let store = try PersistentDataStore(name: "q", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        try await store.put(Data("x".utf8), identifier: "x")
        let folder = store.folderURL.path
        let outside = root.url.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: folder + "/quarantine", contents: Data("not a folder".utf8)))
        #expect(FileManager.default.createFile(atPath: folder + "/junk", contents: Data("junk".utf8)))
        let report = try await store.verify(repair: true)
        let moved = try #require(report.quarantined)
        #expect(Set(moved.map(\.from)) == [folder + "/quarantine", folder + "/junk"])
        let file = try #require(moved.first { $0.from == folder + "/quarantine" }).to
        #expect(file.hasPrefix(folder + "/quarantine/") && file.hasSuffix("-quarantine"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("not a folder".utf8))
        #expect(try await store.verify().isClean)

        // A link named quarantine (to a folder outside the store) is moved in, and nothing goes through it.
        let other = try PersistentDataStore(name: "l", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        let otherFolder = other.folderURL.path
        try FileManager.default.createSymbolicLink(atPath: otherFolder + "/quarantine", withDestinationPath: outside)
        #expect(FileManager.default.createFile(atPath: otherFolder + "/junk", contents: Data("junk".utf8)))
        let linked = try #require(try await other.verify(repair: true).quarantined)
        #expect(Set(linked.map(\.from)) == [otherFolder + "/quarantine", otherFolder + "/junk"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(try await other.verify().isClean)
    }

    @Test func readOnlyEngineRefusesRepair() async throws {
        let writer = try PersistentDataStore(name: "ro", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        try await writer.put(Data("x".utf8), identifier: "x")
        #expect(FileManager.default.createFile(atPath: writer.folderURL.path + "/notes.txt", contents: Data("y".utf8)))
        let reader = try PersistentDataStore(readingOnly: "ro", root: root.url)
        do {
            _ = try await reader.verify(repair: true)
            Issue.record("a read-only engine repaired")
        } catch BlobStoreError.io(_, _, let errno) {
            #expect(errno.rawValue == EROFS)
        }
        #expect(FileManager.default.fileExists(atPath: writer.folderURL.path + "/notes.txt"))
        #expect(!FileManager.default.fileExists(atPath: writer.folderURL.path + "/quarantine"))
    }
}
