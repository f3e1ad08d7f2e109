import BlobCLI
import BlobStore
import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several `blob --root` processes on one store: writers take turns on the store's lock, and a holder
/// that does not let go (another process, or blobd) ends in one clear sentence.
@Suite("blob --root: several processes, one root", .serialized, .enabled(if: BlobBinary.url != nil, BlobBinary.missingReason))
struct SharedRootTests {
    /// Holds `ROOT/STORE/.lock` the way another process's store would (a second `open` of the file has
    /// its own `flock`, so this conflicts with any opener, this process included), saying `pid N`.
    final class LockHolder: Sendable {
        let descriptor: FileDescriptor
        init(root: String, store: String, pid: Int32) throws {
            try FileManager.default.createDirectory(atPath: root + "/" + store, withIntermediateDirectories: true)
            descriptor = try FileDescriptor.open(root + "/" + store + "/.lock", [.readWrite, .create], permissions: 0o644)
            #expect(try descriptor.lock(exclusive: true, nonBlocking: true))
            try Array("pid \(pid)\n".utf8).withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: 0, $0) }
        }
        deinit { try? descriptor.close() }
    }

    @Test("8 parallel 'blob --root R put' processes on one store all succeed, and all 8 blobs are there (5 rounds)")
    func parallelWriters() throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.path + "/root"
        for round in 0..<5 {
            let results = Box([Int: ProcessRun]())
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                let file = folder.file("in-\(round)-\(index)")
                _ = FileManager.default.createFile(atPath: file.path, contents: Data("round \(round) blob \(index)".utf8))
                let run = try? runBlob(["--root", root, "put", "s/x\(round)-\(index)", file.path])
                results.with { $0[index] = run }
            }
            for index in 0..<8 {
                let run = try #require(results.current[index])
                #expect(run.status == 0, "round \(round), writer \(index): \(run.errorText)")
            }
            for index in 0..<8 {
                let run = try runBlob(["--root", root, "get", "s/x\(round)-\(index)"])
                #expect(run.status == 0, "\(run.errorText)")
                #expect(run.outputText == "round \(round) blob \(index)")
            }
        }
        let listing = try runBlob(["--root", root, "--json", "ls", "s", "--all"])
        #expect((try listing.json()["items"] as? [Any])?.count == 40, "\(listing.outputText)")
    }

    @Test("a holder that never lets go: the put gives up after --wait, naming the holder's pid, exit 1")
    func holderNeverReleases() throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.path + "/root"
        let holder = try LockHolder(root: root, store: "s", pid: 4_194_301)
        let file = folder.file("in")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8))
        let run = try runBlob(["--root", root, "--wait", "0.3", "put", "s/x", file.path])
        #expect(run.status == 1)
        #expect(
            run.errorText
                == "blob: store 's' is still in use by another process (pid 4194301) after waiting 0.3 s; retry when it has finished, or wait longer with '--wait SECONDS'\n"
        )
        let environmentWait = try runBlob(["--root", root, "put", "s/x", file.path], environment: ["BLOB_WAIT": "0"])
        #expect(environmentWait.status == 1)
        #expect(
            environmentWait.errorText
                == "blob: store 's' is in use by another process (pid 4194301); retry when it has finished, or wait for it with '--wait SECONDS'\n")
        withExtendedLifetime(holder) {}
    }

    @Test("a holder that lets go while the put waits: the put succeeds")
    func holderReleases() throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.path + "/root"
        let holder = try LockHolder(root: root, store: "s", pid: 4_194_301)
        let file = folder.file("in")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("waited".utf8))
        // Released once the put is surely waiting: its process has started and read the lock file.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { try? holder.descriptor.close() }
        let run = try runBlob(["--root", root, "--wait", "600", "put", "s/x", file.path])
        #expect(run.status == 0, "\(run.errorText)")
        #expect(try runBlob(["--root", root, "get", "s/x"]).outputText == "waited")
    }

    @Test("the holder is blobd (the root's .blobd.lock names its pid): no wait, one sentence saying to go through the daemon")
    func holderIsDaemon() throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.path + "/root"
        let holder = try LockHolder(root: root, store: "images", pid: 4_194_302)
        _ = FileManager.default.createFile(atPath: root + "/.blobd.lock", contents: Data("pid 4194302\n".utf8))
        let file = folder.file("in")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8))
        // A wait of a day: the command returns only because it does not wait for a daemon.
        let run = try runBlob(["--root", root, "--wait", "86400", "put", "images/x", file.path])
        #expect(run.status == 1)
        #expect(
            run.errorText
                == "blob: store 'images' is served by blobd (pid 4194302); use blob without '--root' (through the daemon) or stop blobd\n")
        withExtendedLifetime(holder) {}
    }

    @Test("--wait and $BLOB_WAIT take seconds from 0 to 86400; anything else is a usage error (64)")
    func waitValues() throws {
        #expect(try EmbeddedBackend.lockWait(option: nil, environment: [:]) == .seconds(10))
        #expect(try EmbeddedBackend.lockWait(option: "2.5", environment: ["BLOB_WAIT": "1"]) == .milliseconds(2500))
        #expect(try EmbeddedBackend.lockWait(option: nil, environment: ["BLOB_WAIT": "0"]) == .zero)
        #expect(throws: UsageError.self) { try EmbeddedBackend.lockWait(option: "-1", environment: [:]) }
        #expect(throws: UsageError.self) { try EmbeddedBackend.lockWait(option: nil, environment: ["BLOB_WAIT": "soon"]) }
        let man = try runBlob(["help", "--man"])
        #expect(man.outputText.contains("BLOB_WAIT") && man.outputText.contains("wait"))
        let help = try runBlob(["help"])
        #expect(help.outputText.contains("--wait SECONDS"), "\(help.outputText)")
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let run = try runBlob(["--root", folder.path, "--wait", "forever", "ls", "s"])
        #expect(run.status == 64)
        #expect(run.errorText.contains("'--wait' must be a number of seconds from 0 to 86400 (got 'forever')"), "\(run.errorText)")
    }

    @Test("get, stat, ls, stores and verify with --root work while blobd holds the store")
    func readsWhileDaemonHolds() throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.path + "/root"
        let file = folder.file("in")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("served".utf8))
        #expect(try runBlob(["--root", root, "put", "images/x", file.path]).status == 0)
        let holder = try LockHolder(root: root, store: "images", pid: 4_194_302)
        _ = FileManager.default.createFile(atPath: root + "/.blobd.lock", contents: Data("pid 4194302\n".utf8))
        let get = try runBlob(["--root", root, "get", "images/x"])
        #expect(get.status == 0, "\(get.errorText)")
        #expect(get.outputText == "served")
        let stat = try runBlob(["--root", root, "--json", "stat", "images/x"])
        #expect(stat.status == 0, "\(stat.errorText)")
        #expect(try stat.json()["size"] as? Int == 6)
        let ls = try runBlob(["--root", root, "ls", "images"])
        #expect(ls.status == 0, "\(ls.errorText)")
        #expect(ls.outputText.contains("x"))
        let empty = try runBlob(["--root", root, "ls", "images/nothing"])
        #expect(empty.status == 0, "\(empty.errorText)")
        #expect(try runBlob(["--root", root, "stores"]).status == 0)
        let verify = try runBlob(["--root", root, "verify", "images"])
        #expect(verify.status == 0, "\(verify.outputText) \(verify.errorText)")
        let missing = try runBlob(["--root", root, "get", "images/y"])
        #expect(missing.status == 2)
        withExtendedLifetime(holder) {}
    }

    @Test("blob --root get and stat in other processes see every blob this process committed, while it keeps splitting buckets")
    func readsFollowSplitsOfAnotherProcess() async throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let writer = try PersistentDataStore(
            name: "busy", root: folder.url, configuration: StoreConfiguration(durability: .relaxed, bucketCapacity: 4))
        let committed = Box([String]())
        let done = Box(false)
        let writing = Task {
            for index in 0..<400 {
                let id = "k-" + String(index * 7919 % 1000)
                try await writer.put(Data(id.utf8), identifier: id)
                committed.with { $0.append(id) }
            }
            done.with { $0 = true }
        }
        var reads = 0
        while !done.current || reads < 10 {
            guard let id = committed.current.randomElement() else {
                try await Task.sleep(for: .milliseconds(1))
                continue
            }
            let (get, stat) = try await Task.detached {
                (try runBlob(["--root", folder.path, "get", "busy/" + id]), try runBlob(["--root", folder.path, "stat", "busy/" + id]))
            }.value
            #expect(get.status == 0, "get \(id): \(get.errorText)")
            #expect(get.outputText == id)
            #expect(stat.status == 0, "stat \(id): \(stat.errorText)")
            reads += 1
        }
        try await writing.value
        let ls = try runBlob(["--root", folder.path, "--json", "ls", "busy", "--all"])
        #expect((try ls.json()["items"] as? [Any])?.count == 400, "\(ls.errorText)")
    }
}
