import Foundation
import Glibc

/// A server under load in a daemon scenario: blobd, or nginx serving the same paths.
protocol BenchServer: AnyObject, Sendable {
    /// Where it listens.
    var socketPath: String { get }
    /// The processes whose CPU time counts as the server's (children are included, see ``ProcessCPU``).
    var processIDs: [pid_t] { get }
    /// Stops it and reaps its processes.
    func stop()
}

extension BenchDaemon: BenchServer {
    var processIDs: [pid_t] { [pid] }
}

/// Which peer servers this machine has, looked up once per process. `Benchmarks/scripts/peers install`
/// installs them; when one is missing, the scenarios say why in one line and measure blobd alone.
enum Peers {
    /// The nginx binary, and whether it has the WebDAV module (needed for PUT), or why there is none.
    static let nginx: Result<(path: String, dav: Bool), BenchFailure> = {
        guard let path = ChildProcess.find("nginx") else {
            return .failure(BenchFailure("nginx not found: run Benchmarks/scripts/peers install"))
        }
        // `nginx -V` prints its build options on stderr.
        let log = "/tmp/blob-bench-nginx-V-\(getpid())"
        defer { unlink(log) }
        guard (try? ChildProcess.output([path, "-V"], stderrPath: log)) != nil,
            let options = try? String(contentsOfFile: log, encoding: .utf8)
        else {
            return .failure(BenchFailure("\(path) -V failed: run Benchmarks/scripts/peers check"))
        }
        return .success((path, options.contains("--with-http_dav_module")))
    }()

    /// nginx if it can serve PUT (WebDAV module), else why not.
    static var nginxWithPut: Result<String, BenchFailure> {
        nginx.flatMap { found in
            found.dav ? .success(found.path) : .failure(BenchFailure("\(found.path) has no WebDAV module (PUT): run Benchmarks/scripts/peers install"))
        }
    }

    /// `redis-server` and `redis-benchmark`, or why not.
    static let redis: Result<(server: String, benchmark: String), BenchFailure> = {
        guard let server = ChildProcess.find("redis-server"), let benchmark = ChildProcess.find("redis-benchmark") else {
            return .failure(BenchFailure("redis-server/redis-benchmark not found: run Benchmarks/scripts/peers install"))
        }
        return .success((server, benchmark))
    }()
}

/// nginx 1.22 serving `directory` at the daemon's blob paths over a Unix socket, as a child process
/// with a generated configuration: 2 worker processes (blobd has 2 event loops), keep-alive without
/// a practical request limit, no access log, `sendfile on`, WebDAV PUT/DELETE writing plain files.
final class NginxServer: BenchServer, @unchecked Sendable {
    // @unchecked: all stored properties are constants.

    let socketPath: String
    /// The master process (leader of its own process group; the workers are its children).
    let pid: pid_t
    /// Configuration, logs, pid file and temp folders.
    let prefix: String

    var processIDs: [pid_t] { [pid] }

    /// Starts nginx with its files under `prefix` (created), serving `directory` (created), listening
    /// on `socketPath`, and waits until it accepts connections.
    init(binary: String, prefix: String, directory: String, socketPath: String) throws {
        self.socketPath = socketPath
        self.prefix = prefix
        try Files.makeDirectories(prefix)
        try Files.makeDirectories(directory)
        // The request-body temp folder is next to the served one (same filesystem), so a PUT's temp
        // file is renamed into place as blobd's are, not copied.
        let configuration = """
            daemon off;
            master_process on;
            worker_processes 2;
            \(geteuid() == 0 ? "user root;" : "")
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                sendfile on;
                keepalive_requests 1000000;
                keepalive_timeout 600s;
                client_max_body_size 0;
                client_body_temp_path \(prefix)/body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
                default_type application/octet-stream;
                server {
                    listen unix:\(socketPath);
                    location \(RequestPlan.pathPrefix) {
                        alias \(directory)/;
                        dav_methods PUT DELETE;
                        create_full_put_path on;
                        dav_access user:rw;
                    }
                }
            }

            """
        let configurationPath = prefix + "/nginx.conf"
        try configuration.write(toFile: configurationPath, atomically: false, encoding: .utf8)
        let log = prefix + "/error.log"
        pid = try ChildProcess.spawn([binary, "-p", prefix + "/", "-c", configurationPath, "-e", log], stderrPath: log)
        try ChildProcess.waitUntilAccepting(socketPath, pid: pid, what: "nginx", log: log)
    }

    /// Sockets each worker process has open, in process-id order. Taken before and after the load
    /// generator connects, the difference shows how nginx spread the connections over its workers:
    /// its workers compete for each `accept` (EPOLLEXCLUSIVE wakes one idle worker), so connections
    /// opened in a burst against an idle server mostly land on one worker, unlike blobd's acceptor,
    /// which deals them out to its loops in turn.
    func workerSockets() -> [Int] {
        ProcessCPU.children(of: pid).sorted().map { ProcessCPU.openSockets($0) }
    }

    /// Fast shutdown (SIGTERM: the master stops its workers and exits), SIGKILL to the group after 5 s.
    func stop() {
        ChildProcess.stop(pid, signal: SIGTERM)
    }
}

/// `redis-server` on a Unix socket with persistence off, and `redis-benchmark` against it.
final class RedisServer: @unchecked Sendable {
    // @unchecked: all stored properties are constants.

    let socketPath: String
    let pid: pid_t
    let folder: String
    let benchmarkBinary: String

    /// Starts redis-server (`--port 0`: Unix socket only; `--save ''`, `--appendonly no`: no disk) with
    /// its log in `folder`, and waits until it accepts connections.
    init(server: String, benchmark: String, folder: String, socketPath: String) throws {
        self.socketPath = socketPath
        self.folder = folder
        benchmarkBinary = benchmark
        try Files.makeDirectories(folder)
        let log = folder + "/redis.log"
        pid = try ChildProcess.spawn(
            [
                server, "--port", "0", "--unixsocket", socketPath, "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
                "--dir", folder, "--logfile", log, "--daemonize", "no",
            ], stderrPath: log)
        try ChildProcess.waitUntilAccepting(socketPath, pid: pid, what: "redis-server", log: log)
    }

    /// What one `redis-benchmark` run reported.
    struct Result: Sendable {
        var requestsPerSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
    }

    /// Runs `redis-benchmark -t TEST -d SIZE -c CLIENTS -n REQUESTS --csv` and parses its CSV line.
    /// Without `-r` every request uses the same key, so GETs return the value a SET stored.
    /// Blocking (it waits for the child): call it from a dedicated thread.
    func benchmark(test: String, size: Int, clients: Int, requests: Int) throws -> Result {
        let (status, output) = try ChildProcess.output(
            [
                benchmarkBinary, "-s", socketPath, "-t", test, "-d", String(size), "-c", String(clients), "-n", String(requests), "--csv",
            ], stderrPath: folder + "/redis-benchmark.log")
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
        let name = "\"\(test.uppercased())\""
        guard status == 0, let line = output.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else {
            throw BenchFailure("redis-benchmark -t \(test) failed (status \(status)): \(output.prefix(300))")
        }
        let fields = line.split(separator: ",").map { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
        guard fields.count >= 7, let rps = fields[1], let p50 = fields[4], let p99 = fields[6], rps > 0 else {
            throw BenchFailure("redis-benchmark: unexpected CSV line \(line)")
        }
        return Result(requestsPerSecond: rps, p50Milliseconds: p50, p99Milliseconds: p99)
    }

    /// SIGTERM (redis saves nothing here and exits), SIGKILL after 5 s.
    func stop() {
        ChildProcess.stop(pid, signal: SIGTERM)
    }
}
