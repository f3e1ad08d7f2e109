import BlobProtocol
import BlobStore
import Foundation

/// Where `blobd`'s stores live.
package enum BackendKind: String, Sendable, Hashable, CaseIterable {
    /// One folder per store under ``ServerConfiguration/root`` (``BlobStore/PersistentDataStore``).
    case file
    /// In the daemon's memory (``BlobStore/InMemoryBlobStore``): named, listed and observed like
    /// file stores, and gone when the daemon exits. No root folder is created or locked.
    case memory
    /// In an S3 bucket (``ServerConfiguration/s3Location``), read through a local read cache; the
    /// root is not claimed (it holds only the default cache folder).
    case s3
}

/// Everything `blobd` needs to know to serve: where, how durably, with how many loops, and for whom.
package struct ServerConfiguration: Sendable, Hashable {
    /// Where the stores live.
    package var backend: BackendKind
    /// The folder holding the named stores (file backend).
    package var root: URL
    /// The Unix socket path clients connect to (at most ``UnixSocket/maximumPathLength`` bytes).
    package var socketPath: String
    /// How puts and removes reach the disk.
    package var durability: Durability
    /// Number of event-loop threads (at least 1).
    package var eventLoopCount: Int
    /// A group whose members may connect besides the daemon's own user and root.
    package var allowedGroup: UInt32?
    /// How much the daemon says on stderr.
    package var logLevel: LogLevel
    /// How log lines (stderr and the access log) are written.
    package var logFormat: LogFormat
    /// Where the access log goes; `nil` means stderr at ``LogLevel/debug`` and off otherwise
    /// (see ``effectiveAccessLog``).
    package var accessLog: AccessLogDestination?
    /// How long a shutdown waits for in-flight requests before closing their connections.
    package var shutdownGraceSeconds: Double
    /// Seconds between `:` heartbeat comments on idle event streams.
    package var heartbeatSeconds: Double
    /// Each file store's memory tier budget in bytes (0: off); see ``BlobStore/StoreConfiguration/memoryTierBytes``.
    package var memoryTierBytes: Int
    /// With ``BackendKind/s3``: `s3://BUCKET[/PREFIX]`.
    package var s3Location: String? = nil
    /// The S3 read cache's folder; `nil`: `s3-cache` under ``root``.
    package var cacheFolder: String? = nil
    /// The folder the S3 read cache uses: ``cacheFolder``, else `s3-cache` under ``root``.
    package var effectiveCacheFolder: String { cacheFolder ?? root.standardizedFileURL.path + "/s3-cache" }
    /// The S3 read cache's size in bytes (0: no cache).
    package var cacheBytes: Int = ServerConfiguration.defaultCacheBytes
    /// How long a validated cache entry is served without asking S3 again (0: every read asks).
    package var cacheStalenessSeconds: Double = 0
    /// With ``BackendKind/s3``: the S3 transport's first-byte and idle timeout, in seconds; connecting
    /// waits no longer than this either (``S3BlobStore/TransportConfiguration/init(timeout:)``).
    package var s3TimeoutSeconds: Double = ServerConfiguration.defaultS3TimeoutSeconds
    /// With ``BackendKind/s3``: how this daemon hears of the other fleet members' changes.
    package var fleetEvents = FleetEventOptions()
    /// With ``BackendKind/s3``: when abandoned multipart uploads are aborted.
    package var uploadSweep = UploadSweepOptions()

    /// The S3 transport's default first-byte and idle timeout, 30 s (``S3BlobStore/TransportConfiguration``'s).
    package static let defaultS3TimeoutSeconds: Double = 30

    /// The S3 read cache's default size, 1 GiB.
    package static let defaultCacheBytes = 1 << 30

    /// blobd's default memory tier budget per open store, 64 MiB: a daemon serves many clients' hot
    /// sets (some 14,000 blobs of 4 KiB), and is the one process holding them.
    package static let defaultMemoryTierBytes = 64 << 20

    /// Creates a configuration; the defaults are those of `blobd` started without flags.
    package init(
        backend: BackendKind = .file, root: URL = StoreRoot.defaultURL, socketPath: String = ServerConfiguration.defaultSocketPath(),
        durability: Durability = .durable, eventLoopCount: Int = 2, allowedGroup: UInt32? = nil,
        logLevel: LogLevel = .info, logFormat: LogFormat = .text, accessLog: AccessLogDestination? = nil, shutdownGraceSeconds: Double = 5, heartbeatSeconds: Double = 15,
        memoryTierBytes: Int = ServerConfiguration.defaultMemoryTierBytes
    ) {
        self.backend = backend
        self.root = root
        self.socketPath = socketPath
        self.durability = durability
        self.eventLoopCount = eventLoopCount
        self.allowedGroup = allowedGroup
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.accessLog = accessLog
        self.shutdownGraceSeconds = shutdownGraceSeconds
        self.heartbeatSeconds = heartbeatSeconds
        self.memoryTierBytes = memoryTierBytes
    }

    /// Where access-log lines go: ``accessLog`` if set, else stderr when ``logLevel`` is
    /// ``LogLevel/debug`` (the per-request line that level promises) and nowhere otherwise.
    package var effectiveAccessLog: AccessLogDestination {
        accessLog ?? (logLevel == .debug ? .stderr : .off)
    }

    /// `$XDG_RUNTIME_DIR/blobstore/blobd.sock` when that variable is an absolute path, else `/tmp/blobstore-$UID/blobd.sock`.
    package static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        DaemonSocket.defaultPath(environment: environment)
    }
}
