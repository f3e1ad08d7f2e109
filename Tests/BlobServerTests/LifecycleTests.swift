import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Start-up and shutdown rules: one daemon per root, no stolen sockets, stale sockets replaced, clean SIGTERM.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct LifecycleTests {
    @Test func secondDaemonOnSameRootExitsNonZero() throws {
        let first = try DaemonProcess()
        let second = try DaemonProcess(
            folder: TempFolder(), root: first.root, socket: first.folder.path + "/run2/blobd.sock", waitForSocket: false)
        let status = second.waitForExit()
        #expect(status == 1)
        #expect(second.log.contains("pid \(first.process.processIdentifier)"))
        #expect(try first.connect().request("GET", "/v1/health").status == 200)
    }

    @Test func liveSocketIsNotStolen() throws {
        let first = try DaemonProcess()
        let other = TempFolder()
        let second = try DaemonProcess(folder: other, root: other.path + "/root", socket: first.socketPath, waitForSocket: false)
        #expect(second.waitForExit() == 1)
        #expect(second.log.contains("already listening"))
        #expect(try first.connect().request("GET", "/v1/health").status == 200)
    }

    @Test func staleSocketIsReplaced() throws {
        let folder = TempFolder()
        let socketPath = folder.path + "/run/blobd.sock"
        mkdir(folder.path + "/run", 0o700)
        // A socket file nobody listens on: bound, then closed without unlinking.
        let stale = try UnixSocket.listen(path: socketPath)
        try stale.close()
        #expect((try? FileSystem.linkStatus(socketPath))?.kind == .socket)
        let daemon = try DaemonProcess(folder: folder, socket: socketPath)
        #expect(try daemon.connect().request("GET", "/v1/health").status == 200)
    }

    @Test func nonSocketFileIsLeftAlone() throws {
        let folder = TempFolder()
        mkdir(folder.path + "/run", 0o700)
        let path = folder.path + "/run/blobd.sock"
        _ = FileManager.default.createFile(atPath: path, contents: Data("keep".utf8))
        let daemon = try DaemonProcess(folder: folder, socket: path, waitForSocket: false)
        #expect(daemon.waitForExit() == 1)
        #expect(FileManager.default.contents(atPath: path) == Data("keep".utf8))
    }

    @Test func unsafeSocketDirectoryIsRefused() throws {
        let folder = TempFolder()
        mkdir(folder.path + "/open", 0o777)
        chmod(folder.path + "/open", 0o777)
        let daemon = try DaemonProcess(folder: folder, socket: folder.path + "/open/blobd.sock", waitForSocket: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("writable by group or others"))
    }

    @Test func sigtermExitsZeroAndRemovesSocket() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/t/blobs/x", body: [1]).status == 201)
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(daemon.waitForExit() == 0, "blobd's log: \(daemon.log)")
        #expect((try? FileSystem.linkStatus(daemon.socketPath)) == nil)
        #expect(daemon.log.contains("stopped"))
        // The root lock is free again: a new daemon starts on the same root.
        let again = try DaemonProcess(folder: daemon.folder, root: daemon.root, socket: daemon.socketPath)
        #expect(try again.connect().request("GET", "/v1/stores/t/blobs/x").body == [1])
    }

    @Test func sigtermFinishesAnInFlightRequest() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let idle = try daemon.connect()
        #expect(try idle.request("GET", "/v1/health").status == 200)
        try client.send("PUT /v1/stores/t/blobs/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234")
        usleep(200_000)  // let the daemon start on the body
        kill(daemon.process.processIdentifier, SIGTERM)
        usleep(200_000)
        // The idle connection is closed at once; the busy one gets to finish.
        #expect(idle.isClosedByPeer())
        try client.send("56789")
        let put = try client.readResponse(method: "PUT")
        #expect(put.status == 201)
        #expect(put.header("Connection") == "close")
        #expect(daemon.waitForExit() == 0, "blobd's log: \(daemon.log)")
        let again = try DaemonProcess(folder: daemon.folder, root: daemon.root, socket: daemon.socketPath)
        #expect(try again.connect().request("GET", "/v1/stores/t/blobs/slow").text == "0123456789")
    }

    /// Runs curl as uid 65534 with the given effective and supplementary groups; returns its output.
    private func curlAsNobody(socket: String, gid: Int, groups: String) throws -> String {
        try runProgram("/usr/bin/setpriv", [
            "--reuid=65534", "--regid=\(gid)", "--groups=\(groups)", "/usr/bin/curl", "-s", "-w", " %{http_code}",
            "--unix-socket", socket, "http://blobd/v1/health",
        ]).outputText
    }

    @Test func peersAreCheckedByCredentials() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
        else {
            print("skipping peer-credential test: needs root, /usr/bin/setpriv and /usr/bin/curl to act as another user")
            return
        }
        let folder = TempFolder()
        chmod(folder.path, 0o711)
        mkdir(folder.path + "/run", 0o711)
        chmod(folder.path + "/run", 0o711)
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--allow-group", "4242"])
        // Effective gid 4242: allowed.
        #expect(try curlAsNobody(socket: daemon.socketPath, gid: 4242, groups: "4242") == #"{"status":"ok"} 200"#)
        // Can open the socket through a supplementary group, but the effective gid is not allowed: 403.
        let refused = try curlAsNobody(socket: daemon.socketPath, gid: 65534, groups: "4242")
        #expect(refused.hasSuffix(" 403"))
        #expect(refused.contains(#""code":"forbidden""#))
        #expect(daemon.log.contains("refused connection from uid 65534"))
        #expect(try daemon.connect().request("GET", "/v1/health").status == 200)
    }

    @Test(arguments: [["--event-loops", "zero"], ["--heartbeat", "0"], ["--heartbeat", "9999"], ["--durability", "maybe"], ["--bogus"]])
    func usageErrorsExit64(arguments: [String]) throws {
        let process = Process()
        process.executableURL = BlobdBinary.url!
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 64)
    }
}
