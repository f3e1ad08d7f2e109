import Foundation
import Testing

@testable import BlobServer

#if canImport(Glibc)
import Glibc
#endif

/// `StoreLockHolders` reads the kernel's whole lock table: `/proc/locks` reports a size of 0 and
/// Foundation's file reader stopped after its first page (about 75 locks), so with many locks held
/// on the machine a store's holder went unreported.
@Suite struct StoreLockHoldersTests {
    @Test func findsHoldersPastTheFirstPageOfTheLockTable() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("locks-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for store in ["first", "last"] {
            try FileManager.default.createDirectory(atPath: root + "/" + store, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: root + "/" + store + "/.lock", contents: Data())
        }
        // A child process (the holders of this process's own locks are left out) that takes one store's
        // lock, 400 others, then the other store's, and says when it holds them all.
        let script = """
            import fcntl, sys, os
            root = sys.argv[1]; held = []
            def lock(path):
                f = open(path, "a"); fcntl.flock(f, fcntl.LOCK_EX); held.append(f)
            lock(root + "/first/.lock")
            for i in range(400): lock(root + "/extra-%d" % i)
            lock(root + "/last/.lock")
            print("ready", flush=True); sys.stdin.read()
            """
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        child.arguments = ["python3", "-c", script, root]
        let input = Pipe(), output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        do { try child.run() } catch {
            Issue.record("python3 is needed for this test: \(error)")
            return
        }
        defer {
            try? input.fileHandleForWriting.close()
            child.waitUntilExit()
        }
        let ready = output.fileHandleForReading.availableData
        #expect(String(decoding: ready, as: UTF8.self).hasPrefix("ready"))
        let holders = StoreLockHolders.holders(of: ["first", "last"], root: root)
        #expect(holders == ["first": "pid \(child.processIdentifier)", "last": "pid \(child.processIdentifier)"])
    }
}
