import BlobStore
import Foundation

/// Everything `blobd` needs to know to serve: where, how durably, with how many loops, and for whom.
public struct ServerConfiguration: Sendable, Hashable {
    /// The folder holding the named stores.
    public var root: URL
    /// The Unix socket path clients connect to (at most ``UnixSocket/maximumPathLength`` bytes).
    public var socketPath: String
    /// How puts and removes reach the disk.
    public var durability: Durability
    /// Number of event-loop threads (at least 1).
    public var eventLoopCount: Int
    /// A group whose members may connect besides the daemon's own user and root.
    public var allowedGroup: UInt32?
    /// How much the daemon says on stderr.
    public var logLevel: LogLevel
    /// How long a shutdown waits for in-flight requests before closing their connections.
    public var shutdownGraceSeconds: Double
    /// Seconds between `:` heartbeat comments on idle event streams.
    public var heartbeatSeconds: Double

    /// Creates a configuration; the defaults are those of `blobd` started without flags.
    public init(
        root: URL = StoreRoot.defaultURL, socketPath: String = ServerConfiguration.defaultSocketPath(),
        durability: Durability = .durable, eventLoopCount: Int = 2, allowedGroup: UInt32? = nil,
        logLevel: LogLevel = .info, shutdownGraceSeconds: Double = 5, heartbeatSeconds: Double = 15
    ) {
        self.root = root
        self.socketPath = socketPath
        self.durability = durability
        self.eventLoopCount = eventLoopCount
        self.allowedGroup = allowedGroup
        self.logLevel = logLevel
        self.shutdownGraceSeconds = shutdownGraceSeconds
        self.heartbeatSeconds = heartbeatSeconds
    }

    /// `$XDG_RUNTIME_DIR/blobstore/blobd.sock` when that variable is an absolute path, else `/tmp/blobstore-$UID/blobd.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        DaemonSocket.defaultPath(environment: environment)
    }
}
