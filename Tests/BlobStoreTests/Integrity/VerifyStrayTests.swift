import BlobSystem
import Foundation
import Testing

@testable import BlobStore

/// `verify()` reports every entry that is not part of the layout, at every level: in the store
/// folder, in `b/`, and in a bucket folder; a clean store reports none.
@Suite struct VerifyStrayTests {
    let root = TemporaryRoot()

    @Test func strayEntriesAreReportedAtEveryLevel() async throws {
        let store = try PersistentDataStore(name: "v", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        try await store.put(Data("kept".utf8), identifier: "kept")
        #expect(try await store.verify().isClean)
        let folder = store.folderURL.path
        let bucket = store.core.queue.sync { store.core.locate("kept").folder }
        let files = [folder + "/notes.txt", folder + "/b/stray", bucket + "/%zz"]
        let folders = [folder + "/extra", folder + "/b/99", bucket + "/sub", folder + "/manifest.d"]
        for path in files { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
        for path in folders { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        let report = try await store.verify()
        #expect(report.healthy == 1)
        #expect(report.corrupt.isEmpty, "\(report.corrupt)")
        #expect(Set(report.orphaned.map(\.path)) == Set(files + folders), "\(report.orphaned)")
        #expect(report.orphaned.first { $0.path.hasSuffix("/b/stray") }?.reason.contains("file in b/") == true)
        #expect(report.orphaned.first { $0.path.hasSuffix("/sub") }?.reason.contains("folder, not a blob file") == true)
        #expect(try await store.get("kept") == Data("kept".utf8))
    }
}
