import Foundation
import Glibc

/// The S3 gateway an S3 scenario measures: a single-node Ceph cluster that the scenario brings up
/// with the repository's `.ci/ceph up` and tears down with `.ci/ceph down`, or, when the
/// environment already names one (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `BLOB_S3_BUCKET`, as `.ci/ceph up` writes them), that one, left running.
///
/// blobd children inherit this process's environment, so ``start()`` exports the cluster's
/// settings for them.
final class S3Gateway: @unchecked Sendable {
    // @unchecked: all stored properties are constants.

    /// Why an S3 scenario cannot run here (no Ceph packages, no `.ci/ceph`): printed, then skipped.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// `127.0.0.1` (IPv4 only: the cluster binds to loopback).
    let address: String
    let port: UInt16
    let accessKeyID: String
    let secretAccessKey: String
    let region: String
    let bucket: String
    /// The cluster's folder when this process started it, else nil.
    let clusterFolder: String?
    /// The script that started it.
    let script: String?
    /// The cluster's daemons (monitor, OSD, radosgw) when this process started it, for their CPU
    /// per request; empty for a cluster from the environment.
    let processIDs: [pid_t]

    /// The `Host` header value: `address:port`.
    var hostHeader: String { "\(address):\(port)" }

    private init(
        endpoint: String, accessKeyID: String, secretAccessKey: String, region: String, bucket: String, clusterFolder: String?,
        script: String?, processIDs: [pid_t]
    ) throws {
        // `http://HOST:PORT`, as `.ci/ceph up` writes it.
        guard endpoint.hasPrefix("http://"), let colon = endpoint.dropFirst(7).lastIndex(of: ":"),
            let port = UInt16(endpoint[endpoint.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        else { throw BenchFailure("AWS_ENDPOINT_URL \(endpoint) is not http://ADDRESS:PORT") }
        address = String(endpoint.dropFirst(7)[..<colon])
        self.port = port
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.bucket = bucket
        self.clusterFolder = clusterFolder
        self.script = script
        self.processIDs = processIDs
    }

    /// The cluster from the environment, else a new one from `.ci/ceph up` (a few seconds).
    /// Blocking: call it from a dedicated thread.
    static func start() throws -> S3Gateway {
        let environment = ProcessInfo.processInfo.environment
        if let endpoint = environment["AWS_ENDPOINT_URL"], let access = environment["AWS_ACCESS_KEY_ID"],
            let secret = environment["AWS_SECRET_ACCESS_KEY"], let bucket = environment["BLOB_S3_BUCKET"]
        {
            Console.progress("s3: using the gateway at \(endpoint), bucket \(bucket), from the environment")
            return try S3Gateway(
                endpoint: endpoint, accessKeyID: access, secretAccessKey: secret, region: environment["AWS_REGION"] ?? "us-east-1",
                bucket: bucket, clusterFolder: nil, script: nil, processIDs: [])
        }
        guard let script = findScript() else {
            throw Unavailable(description: "no .ci/ceph above \(BenchDaemon.executablePath()) (set BLOB_BENCH_CEPH to the script, or AWS_ENDPOINT_URL etc. to a running gateway)")
        }
        for tool in ["ceph-mon", "ceph-osd", "radosgw"] where ChildProcess.find(tool) == nil {
            throw Unavailable(description: "\(tool) is not installed (run .ci/ceph install)")
        }
        // Short: the cluster's admin sockets live under it, and Unix socket paths are limited.
        var template = Array("/tmp/bbc-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BenchFailure("mkdtemp: \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        let log = folder + ".log"
        let started = ContinuousClock.now
        let status = try run([script, "up", folder], log: log)
        guard status == 0, let text = try? String(contentsOfFile: folder + "/env", encoding: .utf8) else {
            let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(5).joined(separator: " | ")
            unlink(log)
            throw BenchFailure("\(script) up \(folder) failed (status \(status)): \(tail)")
        }
        unlink(log)
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let assignment = line.hasPrefix("export ") ? line.dropFirst(7) : line[...]
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        // The daemons' pid files (`mon.a.pid`, `osd.0.pid`, `client.rgw.a.pid`).
        let pids = ((try? Files.entries(of: folder + "/run")) ?? []).filter { $0.name.hasSuffix(".pid") }.compactMap { entry in
            (try? String(contentsOfFile: folder + "/run/" + entry.name, encoding: .utf8)).flatMap {
                pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        // Killed (SIGKILL) if the run is interrupted; `stop()` takes them back out.
        for pid in pids { ChildReaper.track(pid, group: false) }
        for (name, value) in values { setenv(name, value, 1) }
        guard let endpoint = values["AWS_ENDPOINT_URL"], let access = values["AWS_ACCESS_KEY_ID"],
            let secret = values["AWS_SECRET_ACCESS_KEY"], let bucket = values["BLOB_S3_BUCKET"]
        else {
            _ = try? run([script, "down", folder], log: "/dev/null")
            throw BenchFailure("\(folder)/env lacks AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or BLOB_S3_BUCKET")
        }
        let seconds = started.duration(to: .now).components.seconds
        Console.progress("s3: Ceph cluster up in \(folder) (\(seconds) s, \(ProcessInfo.processInfo.environment["CEPH_OBJECTSTORE"] ?? "memstore")), gateway \(endpoint)")
        return try S3Gateway(
            endpoint: endpoint, accessKeyID: access, secretAccessKey: secret, region: values["AWS_REGION"] ?? "us-east-1", bucket: bucket,
            clusterFolder: folder, script: script, processIDs: pids)
    }

    /// Tears down the cluster this process started (`.ci/ceph down`); nothing for one from the environment.
    func stop() {
        guard let clusterFolder, let script else { return }
        _ = try? S3Gateway.run([script, "down", clusterFolder], log: "/dev/null")
        for pid in processIDs { ChildReaper.untrack(pid) }
        for name in ["AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "BLOB_S3_BUCKET", "BLOB_CEPH_DIR"] { unsetenv(name) }
    }

    /// `connections` keep-alive TCP connections to the gateway, with Nagle off (as blobd's client
    /// has it: a request's head and body go out in one write, and must not wait for an ACK).
    func connect(_ connections: Int) throws -> [Int32] {
        var opened: [Int32] = []
        do {
            for _ in 0..<connections {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { throw SystemError.current("socket", hostHeader) }
                opened.append(fd)
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                var socketAddress = sockaddr_in()
                socketAddress.sin_family = sa_family_t(AF_INET)
                socketAddress.sin_port = port.bigEndian
                guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else {
                    throw BenchFailure("the gateway's address \(address) is not an IPv4 address")
                }
                let status = withUnsafePointer(to: &socketAddress) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard status == 0 else { throw SystemError.current("connect", hostHeader) }
            }
        } catch {
            for fd in opened { close(fd) }
            throw error
        }
        return opened
    }

    /// `$BLOB_BENCH_CEPH`, else the first `.ci/ceph` in a folder above this executable or the
    /// current folder (blob-bench is built inside the repository, in `Benchmarks/.build`).
    private static func findScript() -> String? {
        if let path = ProcessInfo.processInfo.environment["BLOB_BENCH_CEPH"], !path.isEmpty { return path }
        for start in [BenchDaemon.executablePath(), FileManager.default.currentDirectoryPath + "/x"] {
            var folder = (start as NSString).deletingLastPathComponent
            while folder.count > 1 {
                let candidate = folder + "/.ci/ceph"
                if access(candidate, X_OK) == 0 { return candidate }
                folder = (folder as NSString).deletingLastPathComponent
            }
        }
        return nil
    }

    /// Runs `arguments` to completion with stdout and stderr to `log`; returns its exit status.
    /// Not through a pipe: the daemons `.ci/ceph up` starts outlive it and must not hold our pipe open.
    private static func run(_ arguments: [String], log: String) throws -> Int32 {
        let fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError.current("open", log) }
        defer { close(fd) }
        let pid = try ChildProcess.spawn(arguments, stdout: fd, stderrPath: log)
        return ChildProcess.reap(pid)
    }
}
