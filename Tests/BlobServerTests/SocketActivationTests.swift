import BlobSystem
import Foundation
import Testing

@testable import BlobServer

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SocketActivationTests {
    @Test func notActivatedWithoutOurPidOrAnyFds() throws {
        #expect(try SocketActivation.inheritedListener(environment: [:], pid: 42) == nil)
        #expect(try SocketActivation.inheritedListener(environment: ["LISTEN_PID": "41", "LISTEN_FDS": "1"], pid: 42) == nil)
        #expect(try SocketActivation.inheritedListener(environment: ["LISTEN_PID": "42", "LISTEN_FDS": "0"], pid: 42) == nil)
    }

    /// What the root's lock records for a passed socket: its path, or nothing for one without a path
    /// in the file system (unnamed, or abstract).
    @Test func theRecordedSocketIsThePathTheSocketIsBoundTo() throws {
        let folder = TempFolder()
        let named = try UnixSocket.listen(path: folder.path + "/named.sock")
        defer { try? named.close() }
        #expect(RootLock.boundPath(of: named) == folder.path + "/named.sock")

        let unnamed = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(unnamed) }
        #expect(RootLock.boundPath(of: FileDescriptor(rawValue: unnamed)) == nil)

        let abstract = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(abstract) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array("\0blobd-test-\(getpid())".utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + name.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(abstract, $0, length) } }
        #expect(bound == 0)
        #expect(RootLock.boundPath(of: FileDescriptor(rawValue: abstract)) == nil)
    }

    /// Starts blobd the way systemd does: a listening socket as fd 3, LISTEN_PID set to blobd's own pid
    /// (through `sh`, whose `exec` keeps the pid), LISTEN_FDS=1. It must serve that socket, and leave
    /// the socket file alone on exit because systemd owns it.
    @Test(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug"))
    func servesTheSocketItIsGiven() throws {
        let folder = TempFolder()
        let socketPath = folder.path + "/activated.sock"
        let listener = try UnixSocket.listen(path: socketPath)
        defer { try? listener.close() }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, listener.rawValue, 3)
        let logPath = folder.path + "/log"
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let script = "LISTEN_PID=$$ LISTEN_FDS=1 exec \"$0\" --root \"$1\" --socket \"$2\" --durability relaxed"
        let arguments = ["/bin/sh", "-c", script, BlobdBinary.url!.path, folder.path + "/root", folder.path + "/unused.sock"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, environ) == 0)

        let client = try RawClient(path: socketPath)
        let put = try client.request("PUT", "/v1/stores/act/blobs/x", body: Array("via systemd".utf8))
        #expect(put.status == 201)
        #expect(try client.request("GET", "/v1/stores/act/blobs/x").text == "via systemd")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/unused.sock"))
        // The root's lock names the socket it was given, not --socket (docs/PROTOCOL.md, "One daemon per root").
        let record = try String(contentsOfFile: folder.path + "/root/.blobd.lock", encoding: .utf8)
        #expect(record == "pid \(pid)\nsocket \(socketPath)\n")

        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(status == 0, "blobd log: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        #expect(FileManager.default.fileExists(atPath: socketPath), "the supervisor's socket file must stay")
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        #expect(log.contains("socket passed by systemd"))
    }
}
