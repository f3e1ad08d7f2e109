import BlobStore
import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Disk trouble under a running daemon: a full disk (ENOSPC on a 1 MiB tmpfs), a file-size limit
// (EFBIG via RLIMIT_FSIZE), a root that turns read-only, and a store folder deleted under it.
// Each must give a clear error naming the cause, keep the previous version, leave no temp file, and
// keep the daemon serving. Mounting needs root; those tests skip with a printed reason otherwise.

/// Sends a PUT whose body the daemon may stop reading (it answers an error and closes): send errors
/// are ignored and the response is read from what arrived.
func putTolerant(_ client: RawClient, _ target: String, body: [UInt8]) throws -> RawResponse {
    let head = "PUT \(target) HTTP/1.1\r\nHost: blobd\r\nContent-Length: \(body.count)\r\n\r\n"
    do { try client.send(Array(head.utf8) + body) } catch {}
    return try client.readResponse(method: "PUT")
}

@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"), .serialized)
struct DaemonDiskTroubleTests {
    static let blob = "/v1/stores/disk/blobs/doc"

    /// Starts blobd on `root` (optionally under a shell that sets RLIMIT_FSIZE and ignores SIGXFSZ).
    func startDaemon(folder: TempFolder, root: String, fileSizeLimitBlocks: Int? = nil, durability: String = "durable") throws -> CrashDaemon {
        let daemon = CrashDaemon(root: root, socketPath: folder.path + "/run/blobd.sock", logPath: folder.path + "/blobd.log")
        daemon.durability = durability
        if let blocks = fileSizeLimitBlocks {
            // `exec` keeps the pid; SIGXFSZ ignored is inherited, so writes past the limit fail with EFBIG.
            daemon.wrapper = ["/bin/sh", "-c", "trap '' XFSZ; ulimit -f \(blocks) && exec \"$0\" \"$@\""]
        }
        try daemon.start()
        return daemon
    }

    /// Stores a small first version and returns its content.
    func storeFirstVersion(_ client: RawClient) throws -> [UInt8] {
        let first = Array("version one, which must survive".utf8)
        let response = try client.request("PUT", Self.blob, body: first)
        #expect(response.status == 201, "first PUT: \(response.status) \(response.text)")
        return first
    }

    /// The previous version is intact, the daemon serves, and no temp file stays behind.
    func expectUnharmed(_ daemon: CrashDaemon, root: String, first: [UInt8], after what: String) throws {
        let client = try RawClient(path: daemon.socketPath)
        let get = try client.request("GET", Self.blob)
        #expect(get.status == 200 && get.body == first, "\(what): previous version not intact (\(get.status), \(get.body.count) bytes)")
        #expect(try client.request("GET", "/v1/health").status == 200, "\(what): daemon stopped serving")
        let tmp = root + "/disk/tmp"
        #expect(eventually { folderContents(tmp).isEmpty }, "\(what): temp files left behind: \(folderContents(tmp))")
        #expect(daemon.process?.isRunning == true, "\(what): daemon died: \(daemon.logText)")
    }

    @Test func fullDiskAnswers507AndKeepsThePreviousVersion() throws {
        let folder = TempFolder()
        guard let mount = TmpfsMount.make(at: folder.path + "/mnt", size: "1m", test: "fullDisk") else { return }
        defer { mount.unmount() }
        let root = mount.path + "/root"
        let daemon = try startDaemon(folder: folder, root: root)
        defer { daemon.kill9() }
        let client = try RawClient(path: daemon.socketPath)
        let first = try storeFirstVersion(client)

        var rng = SplitMix64(seed: 7)
        let big = CrashContent.make(size: 2 << 20, writer: 0, idIndex: 0, sequence: 1, rng: &rng)
        let response = try putTolerant(try RawClient(path: daemon.socketPath), Self.blob, body: big)
        print("fullDisk: PUT answered \(response.status) \(response.text)")
        #expect(response.status == 507, "PUT on a full disk: \(response.status) \(response.text)")
        #expect(response.errorCode == "insufficient_storage")
        #expect(response.text.contains("ENOSPC") || response.text.contains("No space"), "message should name ENOSPC: \(response.text)")
        try expectUnharmed(daemon, root: root, first: first, after: "ENOSPC")
        // The failed upload's file is dropped in the background, off the event loop, since freeing
        // blocks may wait for the disk: wait for the space, which is what the next put needs.
        #expect(eventually { availableBytes(mount.path) >= 512 * 1024 }, "the failed upload's space was not freed: \(availableBytes(mount.path)) bytes left")

        // Once space is free again (the failed temp file was reclaimed), small puts work.
        let again = try RawClient(path: daemon.socketPath).request("PUT", "/v1/stores/disk/blobs/small", body: Array("ok".utf8))
        #expect(again.status == 201, "small PUT after ENOSPC: \(again.status) \(again.text)")
        #expect(daemon.stop() == 0)
    }

    /// Both modes write a temp file in `tmp/` (docs/STORAGE.md); the error names it.
    @Test(arguments: ["durable", "relaxed"])
    func fileSizeLimitGivesEFBIGAndKeepsThePreviousVersion(durability: String) throws {
        let folder = TempFolder()
        let root = folder.path + "/root"
        // 2048 blocks: 1 MiB under dash (512-byte blocks), 2 MiB under bash (1 KiB blocks).
        let daemon = try startDaemon(folder: folder, root: root, fileSizeLimitBlocks: 2048, durability: durability)
        defer { daemon.kill9() }
        let client = try RawClient(path: daemon.socketPath)
        let first = try storeFirstVersion(client)

        var rng = SplitMix64(seed: 8)
        let big = CrashContent.make(size: 3 << 20, writer: 0, idIndex: 0, sequence: 1, rng: &rng)
        let response = try putTolerant(try RawClient(path: daemon.socketPath), Self.blob, body: big)
        print("fileSizeLimit: PUT answered \(response.status) \(response.text)")
        #expect(response.status == 500, "PUT past RLIMIT_FSIZE: \(response.status) \(response.text)")
        #expect(response.errorCode == "io_error")
        #expect(response.text.contains("EFBIG") || response.text.contains("too large"), "message should name EFBIG: \(response.text)")
        let file = "/disk/tmp/put-"
        #expect(response.text.contains(root + file), "message should name the temp file as \(file): \(response.text)")
        try expectUnharmed(daemon, root: root, first: first, after: "EFBIG")
        #expect(daemon.stop() == 0)
    }

    @Test func readOnlyRootGivesClearErrorsAndKeepsServingReads() throws {
        let folder = TempFolder()
        let root = folder.path + "/root"
        let daemon = try startDaemon(folder: folder, root: root)
        defer { daemon.kill9() }
        let client = try RawClient(path: daemon.socketPath)
        let first = try storeFirstVersion(client)

        // chmod means nothing to root, and a file system with files open for writing (the daemon's
        // lock files) cannot be remounted read-only; so as root, bind-mount the root folder onto itself
        // and make that new mount read-only: every path the daemon opens from now on is read-only.
        let makeUnwritable: () -> Bool
        let makeWritable: () -> Bool
        if geteuid() == 0 {
            makeUnwritable = {
                guard runCommand("/bin/mount", ["--bind", root, root]).status == 0 else { return false }
                if runCommand("/bin/mount", ["-o", "remount,bind,ro", root]).status == 0 { return true }
                runCommand("/bin/umount", [root])
                return false
            }
            makeWritable = { runCommand("/bin/umount", [root]).status == 0 }
        } else {
            let folders = [root, root + "/disk", root + "/disk/tmp", root + "/disk/trash", root + "/disk/b", root + "/disk/b/1"]
            makeUnwritable = { folders.allSatisfy { chmod($0, 0o500) == 0 } }
            makeWritable = { folders.allSatisfy { chmod($0, 0o700) == 0 } }
        }
        guard makeUnwritable() else {
            print("readOnlyRoot: skipped: could not make the root unwritable (bind mount or chmod failed)")
            return
        }
        var writable = false
        defer { if !writable { _ = makeWritable() } }
        let put = try putTolerant(try RawClient(path: daemon.socketPath), Self.blob, body: Array("version two".utf8))
        print("readOnlyRoot: PUT answered \(put.status) \(put.text)")
        #expect(put.status == 500 && put.errorCode == "io_error", "PUT on a read-only root: \(put.status) \(put.text)")
        #expect(put.text.contains("EROFS") || put.text.contains("EACCES") || put.text.contains("ead-only"), "message should name the errno: \(put.text)")
        let delete = try RawClient(path: daemon.socketPath).request("DELETE", Self.blob)
        #expect(delete.status == 500 && delete.errorCode == "io_error", "DELETE on a read-only root: \(delete.status) \(delete.text)")
        let newStore = try RawClient(path: daemon.socketPath).request("PUT", "/v1/stores/fresh/blobs/x", body: [1])
        #expect(newStore.status == 500 && newStore.errorCode == "io_error", "PUT creating a store on a read-only root: \(newStore.status) \(newStore.text)")
        let list = try RawClient(path: daemon.socketPath).request("GET", "/v1/stores/disk/blobs")
        #expect(list.status == 200, "listing on a read-only root: \(list.status) \(list.text)")
        try expectUnharmed(daemon, root: root, first: first, after: "read-only root")

        // Writable again: writes work again without a restart.
        writable = makeWritable()
        #expect(writable)
        let after = try RawClient(path: daemon.socketPath).request("PUT", Self.blob, body: Array("version two".utf8))
        #expect(after.status == 200, "PUT once writable again: \(after.status) \(after.text)")
        #expect(daemon.stop() == 0)
    }

    @Test func storeFolderDeletedUnderTheDaemonGivesErrorsNotCrashes() throws {
        let folder = TempFolder()
        let root = folder.path + "/root"
        let daemon = try startDaemon(folder: folder, root: root)
        defer { daemon.kill9() }
        let client = try RawClient(path: daemon.socketPath)
        _ = try storeFirstVersion(client)
        #expect(try client.request("PUT", "/v1/stores/other/blobs/a", body: Array("other".utf8)).status == 201)

        try FileManager.default.removeItem(atPath: root + "/disk")

        var statuses: [String: Int] = [:]
        for (method, target, body) in [
            ("GET", Self.blob, nil), ("HEAD", Self.blob, nil), ("PUT", Self.blob, Array("v2".utf8)),
            ("PUT", "/v1/stores/disk/blobs/new", Array("new".utf8)), ("DELETE", Self.blob, nil),
            ("GET", "/v1/stores/disk/blobs", nil), ("GET", "/v1/stores", nil),
        ] as [(String, String, [UInt8]?)] {
            let response = try RawClient(path: daemon.socketPath).request(method, target, body: body)
            statuses["\(method) \(target)"] = response.status
            // Never a crash or a hang: an answer, and errors say what failed.
            #expect((200..<600).contains(response.status))
            if response.status >= 500 {
                #expect(response.errorCode != nil && response.text.contains("ENOENT"), "\(method) \(target): \(response.status) \(response.text)")
            }
        }
        print("storeFolderDeleted: \(statuses.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value)" }.joined(separator: ", "))")
        #expect(statuses["GET \(Self.blob)"] == 404)
        #expect(statuses["PUT \(Self.blob)"] != 200 && statuses["PUT \(Self.blob)"] != 201 || FileManager.default.fileExists(atPath: root + "/disk"),
                "a PUT acknowledged although its store folder is gone")

        // Other stores are untouched and the daemon serves on.
        let other = try RawClient(path: daemon.socketPath).request("GET", "/v1/stores/other/blobs/a")
        #expect(other.status == 200 && other.text == "other")
        #expect(try RawClient(path: daemon.socketPath).request("GET", "/v1/health").status == 200)
        #expect(daemon.process?.isRunning == true, "daemon died: \(daemon.logText)")
        #expect(daemon.stop() == 0)
    }
}

func folderContents(_ path: String) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] }
