import BlobStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Disk trouble for the embedded store, seen through the `blob` CLI as a child process (so limits and
// failures hit a process of its own): a file-size limit (EFBIG), a full disk (ENOSPC on a 1 MiB tmpfs,
// root only), and a read-only store folder. Each put must fail with a clear error naming the errno,
// keep the previous version, and leave no temp file behind — checked before anything reopens the store.

@Suite(.enabled(if: BuiltTool.blob != nil, "blob binary not found in <package>/.build/debug; run `swift build` first"), .serialized)
struct DiskTroubleTests {
    let blob = BuiltTool.blob!

    /// A scratch folder with the store root at `root`, a first version stored, and a big file to put.
    final class Setup {
        let scratch = TemporaryRoot()
        let root: String
        let first = Array("version one, which must survive".utf8)
        let bigFile: String

        init(root: String? = nil, bigSize: Int, blob: URL) throws {
            try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
            self.root = root ?? scratch.path + "/root"
            let firstFile = scratch.path + "/first"
            try Data(first).write(to: URL(fileURLWithPath: firstFile))
            bigFile = scratch.path + "/big"
            var rng = SplitMix64(seed: 11)
            try Data(CrashContent.make(size: bigSize, writer: 0, idIndex: 0, sequence: 1, rng: &rng)).write(to: URL(fileURLWithPath: bigFile))
            let put = try runTool(blob, ["--root", self.root, "put", "disk/doc", firstFile], scratch: scratch.path)
            #expect(put.status == 0, "first put: \(put.stderr)")
        }

        /// The store's temp files right now (nothing has reopened the store since the failed put).
        var tempFiles: [String] { folderEntries(root + "/disk/tmp") }

        /// Opens the store in this process: the first version is intact and verify is clean.
        func expectFirstVersionIntact(_ what: String) async throws {
            let store = try PersistentDataStore(name: "disk", root: URL(fileURLWithPath: root))
            let data = try await store.get("doc")
            #expect([UInt8](data) == first, "\(what): the previous version changed")
            let report = try await store.verify()
            #expect(report.isClean && report.healthy == 1, "\(what): verify: \(report)")
        }
    }

    @Test func fileSizeLimitFailsWithEFBIGAndKeepsThePreviousVersion() async throws {
        // The `blob` beside a thread-sanitized test build is sanitized too, and ThreadSanitizer's
        // runtime dies of SIGBUS in its own shadow memory under a file-size limit (seen in
        // `__tsan` code as a new thread starts), before our code runs. The plain and address-
        // sanitized runs cover this case.
        if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil {
            print("skipped: ThreadSanitizer's runtime cannot run under `ulimit -f` (SIGBUS in its shadow memory)")
            return
        }
        let setup = try Setup(bigSize: 1 << 20, blob: blob)
        // 128 blocks = 64 KiB (dash) or 128 KiB (bash); SIGXFSZ ignored so write(2) returns EFBIG.
        // Several attempts: a temp file left behind depends on timing (the process exits right after the error).
        for attempt in 1...8 {
            let result = try runTool(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", "trap '' XFSZ; ulimit -f 128 && exec \"$0\" \"$@\"", blob.path, "--root", setup.root, "put", "disk/doc", setup.bigFile],
                scratch: setup.scratch.path)
            if attempt == 1 { print("EFBIG: blob put exited \(result.status): \(result.stderr)") }
            #expect(result.status == 74, "exit status \(result.status) (74 = I/O error)")
            #expect(result.stderr.contains("EFBIG") || result.stderr.contains("File too large"), "stderr should name EFBIG: \(result.stderr)")
            #expect(setup.tempFiles.isEmpty, "attempt \(attempt): temp files left by the failed put: \(setup.tempFiles)")
        }
        try await setup.expectFirstVersionIntact("EFBIG")
    }

    @Test func fullDiskFailsWithENOSPCAndKeepsThePreviousVersion() async throws {
        let mountPoint = TemporaryRoot()
        guard let mount = TmpfsMount.make(at: mountPoint.path, size: "1m", test: "ENOSPC") else { return }
        defer { mount.unmount() }
        let setup = try Setup(root: mountPoint.path + "/root", bigSize: 2 << 20, blob: blob)
        for attempt in 1...8 {
            let result = try runTool(blob, ["--root", setup.root, "put", "disk/doc", setup.bigFile], scratch: setup.scratch.path)
            if attempt == 1 { print("ENOSPC: blob put exited \(result.status): \(result.stderr)") }
            #expect(result.status == 74, "exit status \(result.status) (74 = I/O error)")
            #expect(result.stderr.contains("ENOSPC") || result.stderr.contains("No space"), "stderr should name ENOSPC: \(result.stderr)")
            // Checked before anything reopens the store (an open would clear tmp/ and hide a leak).
            #expect(setup.tempFiles.isEmpty, "attempt \(attempt): temp files left by the failed put: \(setup.tempFiles)")
        }
        try await setup.expectFirstVersionIntact("ENOSPC")
        // The space came back: a small put works.
        let small = setup.scratch.path + "/small"
        try Data("ok".utf8).write(to: URL(fileURLWithPath: small))
        let again = try runTool(blob, ["--root", setup.root, "put", "disk/small", small], scratch: setup.scratch.path)
        #expect(again.status == 0, "small put after ENOSPC: \(again.stderr)")
    }

    @Test func readOnlyStoreFailsClearlyAndKeepsThePreviousVersion() async throws {
        let setup = try Setup(bigSize: 1000, blob: blob)
        let storePath = setup.root + "/disk"
        let makeWritable: () -> Void
        if geteuid() == 0 {
            // Root ignores permissions: bind-mount the store folder onto itself, read-only.
            guard runCommand("/bin/mount", ["--bind", storePath, storePath]).status == 0 else {
                print("read-only store: skipped: bind mount failed")
                return
            }
            guard runCommand("/bin/mount", ["-o", "remount,bind,ro", storePath]).status == 0 else {
                runCommand("/bin/umount", [storePath])
                print("read-only store: skipped: read-only remount failed")
                return
            }
            makeWritable = { if runCommand("/bin/umount", [storePath]).status != 0 { runCommand("/bin/umount", ["-l", storePath]) } }
        } else {
            let folders = [storePath, storePath + "/tmp", storePath + "/trash", storePath + "/b", storePath + "/b/1"]
            for folder in folders { chmod(folder, 0o500) }
            makeWritable = { for folder in folders { chmod(folder, 0o700) } }
        }
        var restored = false
        defer { if !restored { makeWritable() } }

        let put = try runTool(blob, ["--root", setup.root, "put", "disk/doc", setup.bigFile], scratch: setup.scratch.path)
        print("read-only store: blob put exited \(put.status): \(put.stderr)")
        #expect(put.status > 0, "a put into a read-only store must fail with an exit status, not a signal (\(put.status))")
        #expect(put.status == 74, "exit status \(put.status) (74 = I/O error)")
        #expect(put.stderr.contains("EROFS") || put.stderr.contains("EACCES"), "stderr should name the errno: \(put.stderr)")
        let get = try runTool(blob, ["--root", setup.root, "get", "disk/doc"], scratch: setup.scratch.path)
        print("read-only store: blob get exited \(get.status): \(get.stderr)")
        #expect(get.status >= 0, "blob get crashed with signal \(-get.status)")

        makeWritable()
        restored = true
        #expect(setup.tempFiles.isEmpty, "temp files left by the failed put: \(setup.tempFiles)")
        try await setup.expectFirstVersionIntact("read-only store")
    }
}
