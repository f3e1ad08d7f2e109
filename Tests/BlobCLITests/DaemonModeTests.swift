import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blob` without `--root`: every command through the daemon's client.
@Suite(
    "blob against blobd", .serialized,
    .enabled(if: BlobBinary.url != nil && BlobdBinary.url != nil, "blob or blobd binary not built; run `swift build` first"))
struct DaemonModeTests {
    /// The running daemon (another one on the same root and socket after ``restartDaemon()``).
    let daemon: Box<DaemonProcess>
    let socket: String

    init() throws {
        let started = try DaemonProcess()
        daemon = Box(started)
        socket = started.socketPath
    }

    func stop() { daemon.current.terminate() }

    func blob(_ arguments: [String], input: Data? = nil) throws -> ProcessRun {
        try runBlob(["--socket", socket] + arguments, input: input)
    }

    /// Stops the daemon and starts it again on the same root and socket.
    func restartDaemon() throws {
        let old = daemon.current
        old.terminate()
        let next = try DaemonProcess(folder: old.folder, root: old.root, socket: old.socketPath)
        daemon.with { $0 = next }
    }

    @Test func lsOfAMissingStoreFailsThroughTheDaemon() throws {
        defer { stop() }
        let missing = try blob(["ls", "nosuch"])
        #expect(missing.status == 2)
        #expect(missing.errorText == "blob: store 'nosuch' not found (daemon at \(socket))\n")
        #expect(missing.output.isEmpty)
        #expect(try blob(["--json", "ls", "nosuch/prefix"]).status == 2)
        #expect(try blob(["put", "box/a", "-"], input: Data("a".utf8)).status == 0)
        let emptyPrefix = try blob(["ls", "box/zzz"])
        #expect(emptyPrefix.status == 0 && emptyPrefix.output.isEmpty, "an existing store with nothing under the prefix is not an error")
        #expect(try blob(["rm", "-r", "--yes", "nosuch"]).status == 2)
    }

    @Test func watchSaysReconnectingWhenTheDaemonGoesAwayAndResumes() throws {
        defer { stop() }
        #expect(try blob(["put", "w/before", "-"], input: Data("0".utf8)).status == 0)
        let watcher = Process()
        watcher.executableURL = BlobBinary.url
        watcher.arguments = ["--socket", socket, "watch", "w"]
        let output = Pipe(), errors = Pipe()
        watcher.standardOutput = output
        watcher.standardError = errors
        try watcher.run()
        let collected = Box(Data()), collectedErrors = Box(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            collected.with { $0.append(chunk) }
        }
        errors.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            collectedErrors.with { $0.append(chunk) }
        }
        defer {
            if watcher.isRunning { kill(watcher.processIdentifier, SIGTERM) }
            watcher.waitUntilExit()
            output.fileHandleForReading.readabilityHandler = nil
            errors.fileHandleForReading.readabilityHandler = nil
        }
        func text() -> String { String(decoding: collected.current, as: UTF8.self) }
        func errorText() -> String { String(decoding: collectedErrors.current, as: UTF8.self) }
        func waitFor(_ needle: String, in source: () -> String) -> Bool {
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                if source().contains(needle) { return true }
                usleep(50_000)
            }
            return false
        }
        // The watcher connects in the background: probe until it reports a change.
        var probes = 0
        let deadline = Date().addingTimeInterval(15)
        while !text().contains("w/probe") && Date() < deadline {
            probes += 1
            _ = try blob(["put", "w/probe", "-"], input: Data("\(probes)".utf8))
            usleep(200_000)
        }
        #expect(text().contains("w/probe"), "watch never reported a change")

        try restartDaemon()
        #expect(waitFor("blob: lost the connection to the daemon; reconnecting…", in: errorText), "\(errorText())")
        #expect(waitFor("blob: reconnected; resuming after event #", in: errorText), "\(errorText())")
        #expect(try blob(["put", "w/after-restart", "-"], input: Data("1".utf8)).status == 0)
        #expect(waitFor("w/after-restart", in: text), "the watch resumed: \(text())")
        #expect(watcher.isRunning)
        #expect(errorText().components(separatedBy: "reconnecting").count == 2, "said once per outage: \(errorText())")
    }

    @Test func everyCommandWorksThroughTheDaemon() throws {
        defer { stop() }
        let content = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let put = try blob(["--json", "put", "box/dir/file.bin", "-", "--meta", "owner=me"], input: content)
        #expect(put.status == 0, "\(put.errorText)")
        #expect(try put.json()["size"] as? Int == content.count)
        let get = try blob(["get", "box/dir/file.bin"])
        #expect(get.status == 0 && get.output == content)
        let stat = try blob(["--json", "stat", "box/dir/file.bin"])
        #expect((try stat.json()["metadata"] as? [String: String]) == ["owner": "me"])
        #expect(try blob(["ls", "box/dir/"]).outputText.contains("file.bin"))
        #expect(try blob(["stores"]).outputText.contains("box"))
        let verify = try blob(["verify", "box"])
        #expect(verify.status == 0, "\(verify.errorText)")
        #expect(try blob(["put", "box/once", "-", "--if-none-match"], input: Data([1])).status == 0)
        #expect(try blob(["put", "box/once", "-", "--if-none-match"], input: Data([2])).status == 3)
        #expect(try blob(["rm", "box/dir/file.bin"]).status == 0)
        #expect(try blob(["get", "box/dir/file.bin"]).status == 2)
        #expect(try blob(["put", "box/not-image", "-", "--image"], input: Data("hello".utf8)).status == 4)
    }

    @Test func watchPrintsChangesMadeByOthers() throws {
        defer { stop() }
        let watcher = Process()
        watcher.executableURL = BlobBinary.url
        watcher.arguments = ["--socket", socket, "--json", "watch", "w"]
        let output = Pipe()
        watcher.standardOutput = output
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        let collected = Box(Data())
        let reader = output.fileHandleForReading
        reader.readabilityHandler = { handle in
            let chunk = handle.availableData
            collected.with { $0.append(chunk) }
        }
        func text() -> String { String(decoding: collected.current, as: UTF8.self) }
        func waitFor(_ needle: String) -> Bool {
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                if text().contains(needle) { return true }
                usleep(50_000)
            }
            return false
        }
        // The watcher connects in the background: probe until it reports a change.
        let deadline = Date().addingTimeInterval(15)
        var probes = 0
        while !text().contains("probe") && Date() < deadline {
            probes += 1
            _ = try blob(["put", "w/probe", "-"], input: Data("\(probes)".utf8))
            usleep(200_000)
        }
        #expect(text().contains("probe"), "watch never reported a change")
        #expect(try blob(["put", "w/a", "-"], input: Data("x".utf8)).status == 0)
        #expect(try blob(["rm", "w/a"]).status == 0)
        #expect(waitFor("\"removed\""))
        kill(watcher.processIdentifier, SIGTERM)
        watcher.waitUntilExit()
        reader.readabilityHandler = nil
        let lines = text().split(separator: "\n").filter { !$0.contains("probe") }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains("\"put\"") == true && lines.first?.contains("\"a\"") == true)
        #expect(lines.last?.contains("\"removed\"") == true)
    }

    @Test func aMissingDaemonExits69NamingTheSocket() throws {
        defer { stop() }
        let run = try runBlob(["--socket", "/tmp/no-such-blobd.sock", "stores"])
        #expect(run.status == 69)
        #expect(run.errorText.contains("/tmp/no-such-blobd.sock"))
        #expect(run.errorText.contains("blobd"))
    }
}
