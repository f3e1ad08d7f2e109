import Foundation
import Glibc

/// blobd on S3 (`blobd --backend s3://BUCKET/PREFIX`) with its read cache in a folder of its own,
/// as a child process listening on a Unix socket. It reads the gateway's address and keys from the
/// environment, as AWS tools do (``S3Gateway/start()`` exports them).
final class S3Blobd: BenchServer, @unchecked Sendable {
    // @unchecked: all stored properties are constants.

    let socketPath: String
    let pid: pid_t
    /// The read cache's folder.
    let cacheFolder: String
    var processIDs: [pid_t] { [pid] }

    /// Starts blobd on `bucket`/`prefix` with its cache in `folder/cache` (created) and its log in
    /// `folder/blobd.log`, and waits until it accepts connections. `arguments` are extra flags
    /// (the cache's size and staleness bound).
    init(bucket: String, prefix: String, folder: String, socketPath: String, arguments: [String] = []) throws {
        try BenchDaemon.checkBlobd()
        self.socketPath = socketPath
        cacheFolder = folder + "/cache"
        try Files.makeDirectories(cacheFolder)
        let socketFolder = (socketPath as NSString).deletingLastPathComponent
        try Files.makeDirectories(socketFolder)
        chmod(socketFolder, 0o700)
        let log = folder + "/blobd.log"
        pid = try ChildProcess.spawn(
            [
                BenchDaemon.blobdPath, "--backend", "s3://\(bucket)/\(prefix)", "--cache", cacheFolder, "--socket", socketPath,
                "--log-level", "error",
            ] + arguments, stderrPath: log)
        try ChildProcess.waitUntilAccepting(socketPath, pid: pid, what: "blobd --backend s3://\(bucket)/\(prefix)", log: log)
    }

    /// SIGTERM (graceful), SIGKILL after 10 s.
    func stop() {
        ChildProcess.stop(pid, signal: SIGTERM, grace: .seconds(10))
    }
}
