import BlobStore
import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One store's verification result, as `blob verify` shows it.
public struct StoreVerification: Sendable, Hashable, Codable {
    public var name: String
    public var report: VerificationReport

    public init(name: String, report: VerificationReport) {
        self.name = name
        self.report = report
    }
}

/// What the commands need from wherever the blobs live: the embedded store (`--root`) or, later,
/// the daemon (`--socket`). Every command is written against this protocol only.
public protocol BlobBackend: Sendable {
    /// Where the backend is, for messages (`root /var/blobs`, `daemon at /run/…/blobd.sock`).
    var location: String { get }

    /// The store `name`. With `create: false` (every command except `put`) a backend that can tell
    /// cheaply throws ``CLIError/storeNotFound(store:location:)`` for a store that does not exist,
    /// instead of creating it; a backend that cannot tell may return the store anyway.
    func store(_ name: String, create: Bool) async throws -> any BlobStoring

    /// Every store with its totals, sorted by name.
    func stores() async throws -> [StoreSummary]

    /// Whether the store `name` exists (`ls` and `rm -r` ask when a listing comes back empty).
    func storeExists(_ name: String) async throws -> Bool

    /// Checks one store (or all, when `nil`) against its checksums.
    func verify(_ store: String?) async throws -> [StoreVerification]

    /// Change events of one store (or of all, when `nil`), from now until the stream is dropped;
    /// `status` hears when the source goes away and comes back (the daemon restarting).
    /// Throws a ``UsageError`` if this backend cannot watch (the embedded one sees only its own changes).
    func changes(_ store: String?, status: @escaping @Sendable (WatchStatus) -> Void) async throws -> AsyncStream<BlobChange>
}

extension BlobBackend {
    /// Whether ``store(_:create:)`` without creating finds the store.
    public func storeExists(_ name: String) async throws -> Bool {
        do {
            _ = try await store(name, create: false)
            return true
        } catch CLIError.storeNotFound {
            return false
        }
    }
}

/// The blobs in a root folder on this machine, used directly through ``PersistentDataStore``.
///
/// Only one process can have a store open at a time: if `blobd` is serving the root, its stores
/// report ``BlobStoreError/storeLocked(path:holder:)``.
public struct EmbeddedBackend: BlobBackend {
    public let root: URL
    public let configuration: StoreConfiguration

    public init(root: URL, configuration: StoreConfiguration = StoreConfiguration()) {
        self.root = root.standardizedFileURL
        self.configuration = configuration
    }

    public var location: String { "root \(root.path)" }

    public func store(_ name: String, create: Bool) async throws -> any BlobStoring {
        if !create {
            var isDirectory: ObjCBool = false
            let path = root.appendingPathComponent(name, isDirectory: true).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIError.storeNotFound(store: name, location: location)
            }
        }
        return try PersistentDataStore(name: name, root: root, configuration: configuration)
    }

    /// Folders under the root whose names are valid store names.
    public func storeNames() throws -> [String] {
        let path = root.path
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let entries: [DirectoryEntry]
        do { entries = try DirectoryStream.entries(of: path) } catch {
            throw BlobStoreError.io(operation: "list folder", path: path, errno: error)
        }
        return entries.filter { $0.kind == .directory && StoreName.violation(in: $0.name) == nil }
            .map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    public func stores() async throws -> [StoreSummary] {
        var result: [StoreSummary] = []
        for name in try storeNames() {
            let store = try PersistentDataStore(name: name, root: root, configuration: configuration)
            result.append(StoreSummary(name: name, statistics: try await store.statistics()))
        }
        return result
    }

    public func verify(_ store: String?) async throws -> [StoreVerification] {
        let names: [String]
        if let store {
            _ = try await self.store(store, create: false)
            names = [store]
        } else {
            names = try storeNames()
        }
        var result: [StoreVerification] = []
        for name in names {
            let store = try PersistentDataStore(name: name, root: root, configuration: configuration)
            result.append(StoreVerification(name: name, report: try await store.verify()))
        }
        return result
    }

    public func changes(_ store: String?, status: @escaping @Sendable (WatchStatus) -> Void) async throws -> AsyncStream<BlobChange> {
        throw UsageError(
            "'watch' needs the daemon: with --root only changes made by this same process could be seen; start blobd and drop --root",
            command: "watch")
    }
}

/// What `watch` tells its user about the source of the events.
public enum WatchStatus: Sendable, Hashable {
    /// The connection to the daemon was lost; it is being re-established.
    case reconnecting
    /// Connected again; events resume after the one with this id (`nil`: none was seen).
    case resumed(afterEventID: String?)
}

/// How the command line chose its backend.
public enum BackendChoice: Sendable, Hashable {
    /// `--root DIR`.
    case embedded(root: String)
    /// The daemon at this socket (`--socket`, `$BLOB_SOCKET`, or the default).
    case daemon(socket: String)

    /// `--root` wins; else `--socket`, else `$BLOB_SOCKET`, else ``defaultSocketPath(environment:)``.
    public static func resolve(_ globals: GlobalOptions, environment: [String: String]) -> BackendChoice {
        if let root = globals.root { return .embedded(root: root) }
        if let socket = globals.socket { return .daemon(socket: socket) }
        if let socket = environment["BLOB_SOCKET"], !socket.isEmpty { return .daemon(socket: socket) }
        return .daemon(socket: defaultSocketPath(environment: environment))
    }

    /// `$XDG_RUNTIME_DIR/blobstore/blobd.sock`, else `/tmp/blobstore-$UID/blobd.sock`.
    public static func defaultSocketPath(environment: [String: String]) -> String {
        DaemonSocket.defaultPath(environment: environment)
    }
}

/// Makes the daemon backend for a socket path. The integrator supplies one (see ``BlobCLI/run(_:environment:console:daemon:)``);
/// it should throw ``CLIError/daemonUnreachable(socket:reason:)`` when nothing answers.
public typealias DaemonConnector = @Sendable (_ socketPath: String) async throws -> any BlobBackend
