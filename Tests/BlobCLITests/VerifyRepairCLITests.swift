import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blob verify --repair`: with `--root` (opening the store for writing) and through blobd, what
/// `verify` reports is moved into the store's `quarantine/` folder and the store verifies clean.
@Suite("blob verify --repair", .serialized, .enabled(if: BlobBinary.url != nil, BlobBinary.missingReason))
struct VerifyRepairCLITests {
    /// Flips the last byte of the store's one regular file larger than `size` in `b/`; returns its path.
    static func damageFileLarger(than size: Int, in store: String) throws -> String {
        let path = try #require(FileManager.default.enumerator(atPath: store + "/b")?.compactMap { $0 as? String }
            .map { store + "/b/" + $0 }
            .first { path in
                let attributes = try? FileManager.default.attributesOfItem(atPath: path)
                return attributes?[.type] as? FileAttributeType == .typeRegular && (attributes?[.size] as? Int ?? 0) > size
            })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: try handle.seekToEnd() - 1)
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        return path
    }

    @Test("with --root: text, then JSON")
    func repairWithRoot() throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.url.appendingPathComponent("root").path
        func blob(_ arguments: [String], input: Data? = nil) throws -> ProcessRun { try runBlob(["--root", root] + arguments, input: input) }
        #expect(try blob(["put", "s/kept"], input: Data("kept".utf8)).status == 0)
        #expect(try blob(["put", "s/bad"], input: Data(repeating: 3, count: 3000)).status == 0)
        let damaged = try Self.damageFileLarger(than: 3000, in: root + "/s")
        #expect(FileManager.default.createFile(atPath: root + "/s/b/stray", contents: Data("stray".utf8)))

        #expect(try blob(["verify", "s"]).status == 1)
        let repair = try blob(["verify", "--repair", "s"])
        #expect(repair.status == 0, "\(repair.errorText)")
        #expect(repair.outputText.contains("1 corrupt") && repair.outputText.contains("1 orphaned"), "\(repair.outputText)")
        #expect(repair.outputText.contains("quarantined: \(damaged) -> \(root)/s/quarantine/"), "\(repair.outputText)")
        #expect(repair.outputText.contains("quarantined: \(root)/s/b/stray -> \(root)/s/quarantine/"), "\(repair.outputText)")
        let quarantine = try FileManager.default.contentsOfDirectory(atPath: root + "/s/quarantine")
        #expect(quarantine.count == 2 && quarantine.contains { $0.hasSuffix("-b%2Fstray") }, "\(quarantine)")

        let clean = try blob(["verify", "s"])
        #expect(clean.status == 0 && clean.outputText.contains("1 healthy") && clean.outputText.contains("ok"), "\(clean.outputText)")
        #expect(try blob(["get", "s/kept"]).output == Data("kept".utf8))

        // JSON: each store lists its moves; nothing left to move is no problem.
        #expect(FileManager.default.createFile(atPath: root + "/s/notes", contents: Data("n".utf8)))
        let json = try blob(["--json", "verify", "--repair", "s"])
        #expect(json.status == 0, "\(json.errorText)")
        let value = try json.json()
        #expect(value["clean"] as? Bool == true && value["problems"] as? Int == 0)
        let stores = try #require(value["stores"] as? [[String: Any]])
        let moved = try #require(stores.first?["quarantined"] as? [[String: String]], "\(json.outputText)")
        #expect(moved.map { $0["from"] } == [root + "/s/notes"])
        #expect(try blob(["verify", "s"]).status == 0)
    }

    @Test("through blobd", .enabled(if: BlobdBinary.url != nil, "blobd binary not built"))
    func repairThroughDaemon() throws {
        let daemon = try DaemonProcess()
        defer { daemon.terminate() }
        let socket = daemon.socketPath, root = daemon.root
        func blob(_ arguments: [String], input: Data? = nil) throws -> ProcessRun { try runBlob(["--socket", socket] + arguments, input: input) }

        #expect(try blob(["put", "s/kept"], input: Data("kept".utf8)).status == 0)
        #expect(try blob(["put", "s/bad"], input: Data(repeating: 3, count: 3000)).status == 0)
        let damaged = try Self.damageFileLarger(than: 3000, in: root + "/s")
        #expect(try blob(["verify", "s"]).status == 1)
        // With --root a repair needs the store's lock, which the daemon holds: refused, nothing moved.
        let local = try runBlob(["--root", root, "verify", "--repair", "s"])
        #expect(local.status == 1 && local.errorText.contains("blobd"), "\(local.errorText)")
        #expect(!FileManager.default.fileExists(atPath: root + "/s/quarantine"))
        let value = try blob(["--json", "verify", "--repair", "s"]).json()
        let stores = try #require(value["stores"] as? [[String: Any]])
        let moved = try #require(stores.first?["quarantined"] as? [[String: String]], "\(value)")
        #expect(moved.map { $0["from"] } == [damaged])
        #expect(moved.first?["to"]?.hasPrefix(root + "/s/quarantine/") == true)
        #expect(try blob(["verify", "s"]).status == 0)
    }
}
