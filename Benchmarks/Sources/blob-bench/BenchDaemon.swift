import Foundation
import Glibc

/// A daemon under measurement: the product's `blobd` binary (see ``blobdPath``) as a child process,
/// so that its CPU, threads and memory are its own and it shares the cores with the load generator
/// as it would in use.
final class BenchDaemon: @unchecked Sendable {
    /// The `blobd` to run: `$BLOBD` if set, else the one SwiftPM builds next to blob-bench (the
    /// Benchmarks package depends on the `blobd` product for that).
    static let blobdPath: String = {
        if let path = ProcessInfo.processInfo.environment["BLOBD"], !path.isEmpty { return path }
        return (executablePath() as NSString).deletingLastPathComponent + "/blobd"
    }()

    /// Fails with the path and what to do when there is no `blobd` to run.
    static func checkBlobd() throws {
        guard access(blobdPath, X_OK) == 0 else {
            throw BenchFailure(
                "no blobd executable at \(blobdPath) (build the Benchmarks package, which builds blobd next to blob-bench, or set BLOBD)")
        }
    }

    /// The child's process id. Owned by the creating thread; read-only after `init`.
    let pid: pid_t
    /// Where it listens.
    let socketPath: String
    /// Its stores folder.
    let root: String

    /// Starts a daemon on `root` and `socketPath` (whose folder is created, owner-only) and waits until
    /// it accepts connections. `arguments` are extra `blobd` flags (e.g. `--durability relaxed`).
    init(root: String, socketPath: String, arguments: [String] = []) throws {
        self.root = root
        self.socketPath = socketPath
        let socketFolder = (socketPath as NSString).deletingLastPathComponent
        try Files.makeDirectories(socketFolder)
        chmod(socketFolder, 0o700)
        try BenchDaemon.checkBlobd()
        let executable = BenchDaemon.blobdPath
        let argv = [executable, "--root", root, "--socket", socketPath, "--log-level", "error"] + arguments
        var child: pid_t = 0
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        let status = posix_spawn(&child, executable, nil, nil, &cArguments, environ)
        guard status == 0 else { throw BenchFailure("cannot start the daemon \(executable): errno \(status)") }
        pid = child
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let socket = try? Socket.connect(path: socketPath) {
                socket.close()
                return
            }
            var exitStatus: Int32 = 0
            if waitpid(pid, &exitStatus, WNOHANG) == pid {
                throw BenchFailure("the daemon exited during start-up (status \(exitStatus)) on root \(root)")
            }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, nil, 0)
        throw BenchFailure("the daemon did not accept connections on \(socketPath) within 20 s")
    }

    /// Asks the daemon to stop (SIGTERM, graceful) and reaps it; SIGKILL after 10 s.
    func stop() {
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if waitpid(pid, nil, WNOHANG) == pid { return }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, nil, 0)
    }

    /// This executable's path (`/proc/self/exe`): blob-bench re-runs itself for its helper children.
    static func executablePath() -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let count = buffer.withUnsafeMutableBytes { readlink("/proc/self/exe", $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}

/// A benchmark that could not run as set up (a peer missing a file, a daemon that would not start).
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
