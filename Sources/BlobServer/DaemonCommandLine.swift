import BlobStore
import BlobSystem
import Foundation
import S3BlobStore

/// `blobd`'s command line, parsed by hand (no package dependencies). Package-wide so that any other
/// executable of this package that starts a daemon starts exactly the same one.
///
/// Every setting flag has an environment variable (``environmentVariables``); a flag wins over its
/// variable, and an empty variable counts as unset (systemd's `Environment=BLOBD_ROOT=` clears one).
package enum DaemonCommandLine {
    /// What `blobd --version` prints after `blobd `: the package's ``BlobStore/BlobStoreVersion``.
    package static let version = BlobStoreVersion

    /// Each setting flag and the environment variable that sets it when the flag is absent, in `--help` order.
    package static let environmentVariables: [(flag: String, variable: String)] = [
        ("--root", "BLOBD_ROOT"), ("--socket", "BLOBD_SOCKET"), ("--durability", "BLOBD_DURABILITY"),
        ("--event-loops", "BLOBD_EVENT_LOOPS"), ("--allow-group", "BLOBD_ALLOW_GROUP"), ("--log-level", "BLOBD_LOG_LEVEL"),
        ("--log-format", "BLOBD_LOG_FORMAT"), ("--access-log", "BLOBD_ACCESS_LOG"), ("--heartbeat", "BLOBD_HEARTBEAT"),
        ("--backend", "BLOBD_BACKEND"), ("--memory-tier", "BLOBD_MEMORY_TIER"), ("--cache", "BLOBD_CACHE"),
        ("--cache-size", "BLOBD_CACHE_SIZE"), ("--cache-staleness", "BLOBD_CACHE_STALENESS"), ("--s3-timeout", "BLOBD_S3_TIMEOUT"),
    ] + FleetEventOptions.environmentVariables + UploadSweepOptions.environmentVariables

    /// The `--help` text.
    package static let usage = """
        usage: blobd [--root DIR] [--socket PATH] [--durability durable|relaxed] [--event-loops N]
                     [--allow-group GID] [--log-level error|info|debug] [--log-format text|json]
                     [--access-log off|stderr|PATH] [--heartbeat SECONDS]
                     [--backend file|memory|s3://BUCKET[/PREFIX]] [--memory-tier BYTES] [--cache DIR]
                     [--cache-size BYTES] [--cache-staleness SECONDS] [--s3-timeout SECONDS]
                     [--events-listen ADDR] [--events-endpoint URL] [--events-member NAME]
                     [--upload-sweep-age SECONDS] [--upload-sweep-period SECONDS] [--help] [--version]
        Serves the stores under DIR over HTTP/1.1 on the Unix socket PATH.
        Each setting may instead come from the environment variable shown after it (env NAME); a flag wins
        over its variable, and an empty variable counts as unset.
          --root DIR          stores folder (default: \(StoreRoot.defaultURL.path)); env BLOBD_ROOT
          --socket PATH       socket path (default: \(ServerConfiguration.defaultSocketPath()));
                              env BLOBD_SOCKET
          --durability MODE   durable (sync before acknowledging; default) or relaxed; env BLOBD_DURABILITY
          --event-loops N     event-loop threads, 1...64 (default 2); env BLOBD_EVENT_LOOPS
          --allow-group GID   also accept peers whose effective gid is GID (socket mode 0660);
                              env BLOBD_ALLOW_GROUP
          --log-level LEVEL   error, info (default) or debug; env BLOBD_LOG_LEVEL
          --log-format FORMAT text (default) or json (one object per line); env BLOBD_LOG_FORMAT
          --access-log DEST   one line per request to off, stderr or the file DEST (default: stderr
                              at --log-level debug, else off); env BLOBD_ACCESS_LOG
          --heartbeat SECONDS interval of ':' heartbeats on idle /v1/events streams (default 15);
                              env BLOBD_HEARTBEAT
          --backend KIND      file (default: one folder per store under --root), memory (stores
                              live in the daemon's memory and are gone when it exits; no root is
                              used) or s3://BUCKET[/PREFIX] (stores in an S3 bucket, with the
                              endpoint, region and keys from the AWS environment variables and
                              profile files; the bucket is checked at start); env BLOBD_BACKEND
          --memory-tier BYTES file stores keep their hot blobs of up to 64 KiB in memory, all of them
                              together within BYTES (suffix K, M, G or T: powers of 1024; default
                              64M; 0 turns it off); env BLOBD_MEMORY_TIER
          --cache DIR         with s3://: the read cache's folder, emptied at start (default: s3-cache
                              under --root); env BLOBD_CACHE
          --cache-size BYTES  with s3://: the read cache's size (suffix K, M, G or T; default 1G; 0
                              turns it off); env BLOBD_CACHE_SIZE
          --cache-staleness SECONDS
                              with s3://: how long a cached blob is served without asking S3 whether
                              it changed, 0 to 86400 (default 0: every read asks);
                              env BLOBD_CACHE_STALENESS
          --s3-timeout SECONDS
                              with s3://: the longest wait for the object store's first answer byte
                              and for each further piece of a transfer, 0.1 to 3600 (default 30);
                              connecting waits at most 5 s, or SECONDS if less; env BLOBD_S3_TIMEOUT
        \(FleetEventOptions.usage)
        \(UploadSweepOptions.usage)
          --version           print the version and exit
        """

    /// What a command line asks for.
    package enum Outcome: Sendable {
        /// Serve with this configuration.
        case run(ServerConfiguration)
        /// Print ``usage`` and exit 0.
        case help
        /// Print `blobd VERSION` (``BlobStore/BlobStoreVersion``) and exit 0.
        case version
        /// A mistake, described in one line; exit 64.
        case usageError(String)
    }

    /// Parses `arguments` (without the program name) over the settings `environment` gives.
    package static func parse(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Outcome {
        var configuration = ServerConfiguration(socketPath: ServerConfiguration.defaultSocketPath(environment: environment))
        let currentDirectory = FileManager.default.currentDirectoryPath
        var socketSource = "the default socket path"
        // Flags first, to learn which settings they take; then the variables of the others.
        var given: [(name: String, flag: String, value: String?)] = []
        var index = 0
        while index < arguments.count {
            var flag = arguments[index]
            var inline: String?
            if flag.hasPrefix("--"), let equals = flag.firstIndex(of: "=") {
                inline = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            switch flag {
            case "--help", "-h":
                return .help
            case "--version":
                return .version
            case _ where environmentVariables.contains(where: { $0.flag == flag }):
                if inline == nil {
                    index += 1
                    inline = index < arguments.count ? arguments[index] : nil
                }
                given.append((flag, flag, inline))
            default:
                return .usageError("unknown argument '\(flag)'")
            }
            index += 1
        }
        var settings: [(name: String, flag: String, value: String?)] = []
        for (flag, variable) in environmentVariables where !given.contains(where: { $0.flag == flag }) {
            if let value = environment[variable], !value.isEmpty { settings.append((variable, flag, value)) }
        }
        settings += given
        for (name, flag, value) in settings {
            if let problem = apply(flag, value, to: &configuration, currentDirectory: currentDirectory) {
                return .usageError("\(name) \(problem)")
            }
            if flag == "--socket" { socketSource = "\(name) path" }
        }
        if configuration.backend != .s3, let setting = settings.first(where: { $0.flag.hasPrefix("--cache") }) {
            return .usageError("\(setting.name) is a setting of the S3 read cache: it needs --backend s3://BUCKET[/PREFIX]")
        }
        if configuration.backend != .s3, let setting = settings.first(where: { $0.flag.hasPrefix("--upload-sweep") }) {
            return .usageError("\(setting.name) is a setting of the S3 upload sweep: it needs --backend s3://BUCKET[/PREFIX]")
        }
        if configuration.backend != .s3, let setting = settings.first(where: { $0.flag == "--s3-timeout" }) {
            return .usageError("\(setting.name) is a setting of the S3 backend: it needs --backend s3://BUCKET[/PREFIX]")
        }
        // Checked here, before the daemon creates its root, lock or socket folder: a path the
        // kernel cannot bind is a mistake on the command line (or in the environment).
        let socketBytes = configuration.socketPath.utf8.count
        if socketBytes > UnixSocket.maximumPathLength {
            return .usageError("\(socketSource) is \(socketBytes) bytes; a Unix socket path is at most \(UnixSocket.maximumPathLength): choose a shorter one")
        }
        return .run(configuration)
    }

    /// Sets what `flag` sets from `value` (`nil`: the flag ended the command line); returns what is
    /// wrong with the value, phrased to follow the flag's or the variable's name.
    private static func apply(_ flag: String, _ value: String?, to configuration: inout ServerConfiguration, currentDirectory: String) -> String? {
        switch flag {
        case "--root":
            guard let path = value, !path.isEmpty else { return "needs a directory" }
            configuration.root = URL(fileURLWithPath: path)
        case "--socket":
            guard let path = value, !path.isEmpty else { return "needs a path" }
            configuration.socketPath = path.hasPrefix("/") ? path : currentDirectory + "/" + path
        case "--durability":
            guard let text = value, let durability = Durability(rawValue: text) else { return "must be durable or relaxed" }
            configuration.durability = durability
        case "--event-loops":
            guard let text = value, let count = Int(text), (1...64).contains(count) else { return "must be a number from 1 to 64" }
            configuration.eventLoopCount = count
        case "--allow-group":
            guard let text = value, let gid = UInt32(text) else { return "needs a numeric group id" }
            configuration.allowedGroup = gid
        case "--log-level":
            guard let text = value, let level = LogLevel(name: text) else { return "must be error, info or debug" }
            configuration.logLevel = level
        case "--log-format":
            guard let text = value, let format = LogFormat(rawValue: text) else { return "must be text or json" }
            configuration.logFormat = format
        case "--access-log":
            guard let text = value, let destination = AccessLogDestination(argument: text, currentDirectory: currentDirectory) else {
                return "must be off, stderr or a file path"
            }
            configuration.accessLog = destination
        case "--backend":
            if let text = value, text.hasPrefix("s3://") {
                do { _ = try S3Location(parsing: text) } catch { return "\(error.reason)" }
                configuration.backend = .s3
                configuration.s3Location = text
                return nil
            }
            guard let text = value, let backend = BackendKind(rawValue: text), backend != .s3 else { return "must be file, memory or s3://BUCKET[/PREFIX]" }
            configuration.backend = backend
        case "--cache":
            guard let path = value, !path.isEmpty else { return "needs a directory" }
            configuration.cacheFolder = path.hasPrefix("/") ? path : currentDirectory + "/" + path
        case "--cache-size":
            guard let bytes = value.flatMap(DaemonCommandLine.byteCount) else { return DaemonCommandLine.byteCountProblem }
            configuration.cacheBytes = bytes
        case "--cache-staleness":
            guard let text = value, let seconds = Double(text), seconds >= 0, seconds <= 86_400 else {
                return "must be a number of seconds from 0 to 86400"
            }
            configuration.cacheStalenessSeconds = seconds
        case "--s3-timeout":
            guard let text = value, let seconds = Double(text), seconds >= 0.1, seconds <= 3600 else {
                return "must be a number of seconds from 0.1 to 3600"
            }
            configuration.s3TimeoutSeconds = seconds
        case "--events-listen", "--events-endpoint", "--events-member":
            return configuration.fleetEvents.apply(flag, value)
        case "--upload-sweep-age", "--upload-sweep-period":
            return configuration.uploadSweep.apply(flag, value)
        case "--memory-tier":
            guard let bytes = value.flatMap(DaemonCommandLine.byteCount) else { return DaemonCommandLine.byteCountProblem }
            configuration.memoryTierBytes = bytes
        case "--heartbeat":
            guard let text = value, let seconds = Double(text), seconds >= 0.05, seconds <= 3600 else {
                return "must be a number of seconds from 0.05 to 3600"
            }
            configuration.heartbeatSeconds = seconds
        default:
            return "is not a setting"
        }
        return nil
    }

    /// What is wrong with a value ``byteCount(_:)`` refuses.
    static let byteCountProblem = "must be a number of bytes, optionally with K, M, G or T (powers of 1024), up to 1T"

    /// `N`, `NK`, `NM`, `NG` or `NT` (powers of 1024; a trailing `B` or `iB` allowed) as bytes, up to 1 TiB.
    static func byteCount(_ text: String) -> Int? {
        var digits = Substring(text.uppercased())
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits = digits.dropLast(suffix.count)
            break
        }
        var shift = 0
        if let last = digits.last, let position = "KMGT".firstIndex(of: last) {
            shift = 10 * ("KMGT".distance(from: "KMGT".startIndex, to: position) + 1)
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int(digits), count >= 0, count <= (1 << 40) >> shift else { return nil }
        return count << shift
    }
}
