import BlobStore
import BlobSystem
import Foundation

/// `blobd`'s command line, parsed by hand (no package dependencies). Public so that other
/// executables (the benchmark runs a daemon as a child of itself) start exactly the same daemon.
public enum DaemonCommandLine {
    /// What `blobd --version` prints after `blobd `: the package's ``BlobStore/BlobStoreVersion``.
    public static let version = BlobStoreVersion

    /// The `--help` text.
    public static let usage = """
        usage: blobd [--root DIR] [--socket PATH] [--durability durable|relaxed] [--event-loops N]
                     [--allow-group GID] [--log-level error|info|debug] [--heartbeat SECONDS] [--help] [--version]
        Serves the stores under DIR over HTTP/1.1 on the Unix socket PATH.
          --root DIR          stores folder (default: \(StoreRoot.defaultURL.path))
          --socket PATH       socket path (default: \(ServerConfiguration.defaultSocketPath()))
          --durability MODE   durable (sync before acknowledging; default) or relaxed
          --event-loops N     event-loop threads, 1...64 (default 2)
          --allow-group GID   also accept peers whose effective gid is GID (socket mode 0660)
          --log-level LEVEL   error, info (default) or debug
          --heartbeat SECONDS interval of ':' heartbeats on idle /v1/events streams (default 15)
          --version           print the version and exit
        """

    /// What a command line asks for.
    public enum Outcome: Sendable {
        /// Serve with this configuration.
        case run(ServerConfiguration)
        /// Print ``usage`` and exit 0.
        case help
        /// Print `blobd VERSION` (``BlobStore/BlobStoreVersion``) and exit 0.
        case version
        /// A mistake, described in one line; exit 64.
        case usageError(String)
    }

    /// Parses `arguments` (without the program name).
    public static func parse(_ arguments: [String]) -> Outcome {
        var configuration = ServerConfiguration()
        var index = 0
        func value(_ flag: String) -> String? {
            index += 1
            return index < arguments.count ? arguments[index] : nil
        }
        while index < arguments.count {
            var flag = arguments[index]
            var inline: String?
            if flag.hasPrefix("--"), let equals = flag.firstIndex(of: "=") {
                inline = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            func next() -> String? { inline ?? value(flag) }
            switch flag {
            case "--help", "-h":
                return .help
            case "--version":
                return .version
            case "--root":
                guard let path = next(), !path.isEmpty else { return .usageError("--root needs a directory") }
                configuration.root = URL(fileURLWithPath: path)
            case "--socket":
                guard let path = next(), !path.isEmpty else { return .usageError("--socket needs a path") }
                configuration.socketPath = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            case "--durability":
                guard let text = next(), let durability = Durability(rawValue: text) else {
                    return .usageError("--durability must be durable or relaxed")
                }
                configuration.durability = durability
            case "--event-loops":
                guard let text = next(), let count = Int(text), (1...64).contains(count) else {
                    return .usageError("--event-loops must be a number from 1 to 64")
                }
                configuration.eventLoopCount = count
            case "--allow-group":
                guard let text = next(), let gid = UInt32(text) else { return .usageError("--allow-group needs a numeric group id") }
                configuration.allowedGroup = gid
            case "--log-level":
                guard let text = next(), let level = LogLevel(name: text) else {
                    return .usageError("--log-level must be error, info or debug")
                }
                configuration.logLevel = level
            case "--heartbeat":
                guard let text = next(), let seconds = Double(text), seconds >= 0.05, seconds <= 3600 else {
                    return .usageError("--heartbeat must be a number of seconds from 0.05 to 3600")
                }
                configuration.heartbeatSeconds = seconds
            default:
                return .usageError("unknown argument '\(flag)'")
            }
            index += 1
        }
        // Checked here, before the daemon creates its root, lock or socket folder: a path the
        // kernel cannot bind is a mistake on the command line (or in the environment).
        let socketBytes = configuration.socketPath.utf8.count
        if socketBytes > UnixSocket.maximumPathLength {
            return .usageError("--socket path is \(socketBytes) bytes; a Unix socket path is at most \(UnixSocket.maximumPathLength): choose a shorter one")
        }
        return .run(configuration)
    }
}
