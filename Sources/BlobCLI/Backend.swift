import BlobClient
import BlobProtocol
import BlobStore
import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One store's verification result, as `blob verify` shows it.
package struct StoreVerification: Sendable, Hashable, Codable {
    package var name: String
    package var report: VerificationReport

    package init(name: String, report: VerificationReport) {
        self.name = name
        self.report = report
    }
}

/// What the commands need from wherever the blobs live: the embedded store (`--root`) or, later,
/// the daemon (`--socket`). Every command is written against this protocol only.
package protocol BlobBackend: Sendable {
    /// Where the backend is, for messages (`root /var/blobs`, `daemon at /run/…/blobd.sock`).
    var location: String { get }

    /// The store `name`. With `create: false` (every command except `put`) a backend that can tell
    /// cheaply throws ``CLIError/storeNotFound(store:location:)`` for a store that does not exist,
    /// instead of creating it; a backend that cannot tell may return the store anyway.
    func store(_ name: String, create: Bool) async throws -> any BlobStoring

    /// The store `name` for commands that only read it (`get`, `stat`, `ls`): like
    /// ``store(_:create:)`` without creating, but a backend may open it without excluding other
    /// processes (the embedded one does, so these work while blobd serves the root).
    func readOnlyStore(_ name: String) async throws -> any BlobStoring

    /// Every store with its totals, sorted by name.
    func stores() async throws -> [StoreSummary]

    /// Every store with its totals and, where the backend knows it, its cache policy, sorted by name.
    func storesWithPolicies() async throws -> [(summary: StoreSummary, policy: StorePolicy?)]

    /// Store `name`'s cache policy and totals; ``CLIError/storeNotFound(store:location:)`` when it does not exist.
    func storeStatus(_ name: String) async throws -> StoreStatus

    /// Changes the members of store `name`'s policy that `update` sets; with `create` the store is
    /// created if needed, else a missing one is ``CLIError/storeNotFound(store:location:)``.
    func updatePolicy(_ name: String, _ update: PolicyJSON.Update, create: Bool) async throws -> StoreStatus

    /// Whether the store `name` exists (`ls` and `rm -r` ask when a listing comes back empty).
    func storeExists(_ name: String) async throws -> Bool

    /// Checks one store (or all, when `nil`) against its checksums.
    func verify(_ store: String?) async throws -> [StoreVerification]

    /// ``verify(_:)``, and with `repair` moves every corrupt and orphaned entry into the store's
    /// `quarantine/` folder (listed in each report's `quarantined`).
    func verify(_ store: String?, repair: Bool) async throws -> [StoreVerification]

    /// Change events of one store (or of all, when `nil`), from now until the stream is dropped;
    /// `status` hears when the source goes away and comes back (the daemon restarting).
    /// Throws a ``UsageError`` if this backend cannot watch (the embedded one sees only its own changes).
    func changes(_ store: String?, status: @escaping @Sendable (WatchStatus) -> Void) async throws -> AsyncStream<BlobChange>
}

extension BlobBackend {
    /// ``verify(_:)``; a backend without files to move refuses `repair`.
    package func verify(_ store: String?, repair: Bool) async throws -> [StoreVerification] {
        guard repair else { return try await verify(store) }
        throw UsageError("'verify --repair' needs --root or the daemon", command: "verify")
    }

    /// ``store(_:create:)`` without creating.
    package func readOnlyStore(_ name: String) async throws -> any BlobStoring {
        try await store(name, create: false)
    }

    /// Whether ``store(_:create:)`` without creating finds the store.
    package func storeExists(_ name: String) async throws -> Bool {
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
/// One process at a time may have a store open for writing: opening waits up to
/// ``StoreConfiguration/lockWait`` for another `blob --root` to finish, and does not wait for `blobd`;
/// both end in ``CLIError/storeInUse(store:holder:daemon:waited:)``.
package struct EmbeddedBackend: BlobBackend {
    package let root: URL
    package let configuration: StoreConfiguration

    package init(root: URL, configuration: StoreConfiguration = StoreConfiguration()) {
        self.root = root.standardizedFileURL
        self.configuration = configuration
    }

    package var location: String { "root \(root.path)" }

    package func store(_ name: String, create: Bool) async throws -> any BlobStoring {
        if !create { try requireStore(name) }
        return try await open(name)
    }

    /// Opens the store without its lock: reads work while another process (blobd, another
    /// `blob --root`) has it open, and see every blob committed before they start.
    package func readOnlyStore(_ name: String) async throws -> any BlobStoring {
        try requireStore(name)
        return try await openReadOnly(name)
    }

    /// Whether the store's folder exists (opening nothing, so it works while another process holds it).
    package func storeExists(_ name: String) async throws -> Bool {
        do {
            try requireStore(name)
            return true
        } catch CLIError.storeNotFound {
            return false
        }
    }

    private func requireStore(_ name: String) throws {
        var isDirectory: ObjCBool = false
        let path = root.appendingPathComponent(name, isDirectory: true).path
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError.storeNotFound(store: name, location: location)
        }
    }

    /// Opens the store read-only on a dispatch thread (opening may wait a moment for a split by
    /// the writing process to end, which must not hold up the Swift concurrency pool).
    func openReadOnly(_ name: String) async throws -> PersistentDataStore {
        let (root, configuration) = (root, configuration)
        return try await EmbeddedBackend.onDispatchThread { try PersistentDataStore(readingOnly: name, root: root, configuration: configuration) }
    }

    /// The default of ``lockWait(option:environment:)``.
    package static let defaultLockWait = Duration.seconds(10)

    /// How long to wait for another process to release a store: `--wait SECONDS`, else `$BLOB_WAIT`,
    /// else ``defaultLockWait``. A usage error unless a number of seconds from 0 to 86,400.
    package static func lockWait(option: String?, environment: [String: String]) throws -> Duration {
        let (text, source): (String?, String) =
            option != nil ? (option, "'--wait'") : (environment["BLOB_WAIT"].flatMap { $0.isEmpty ? nil : $0 }, "$BLOB_WAIT")
        guard let text else { return defaultLockWait }
        guard let seconds = Double(text), seconds.isFinite, (0...86_400).contains(seconds) else {
            throw UsageError("\(source) must be a number of seconds from 0 to 86400 (got '\(text)')", command: nil)
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Opens the store `name` on a dispatch thread: opening may wait for the store's lock, which
    /// must not hold up the Swift concurrency pool. Another holder becomes ``CLIError/storeInUse(store:holder:daemon:waited:)``.
    func open(_ name: String) async throws -> PersistentDataStore {
        let (root, configuration) = (root, configuration)
        return try await EmbeddedBackend.onDispatchThread {
            do {
                return try PersistentDataStore(name: name, root: root, configuration: configuration)
            } catch BlobStoreError.storeLocked(_, let holder) {
                let daemon = holder.hasPrefix("blobd, ")
                throw CLIError.storeInUse(
                    store: name, holder: daemon ? String(holder.dropFirst("blobd, ".count)) : holder, daemon: daemon,
                    waited: daemon ? .zero : configuration.lockWait)
            }
        }
    }

    /// Runs blocking `body` on a dispatch thread and returns its result to the awaiting task. The
    /// result passes through a mutex rather than the continuation alone: when `body` ends before the
    /// task has suspended, the task goes on without the hand-off the thread sanitizer understands,
    /// and it would take the store's fields, written on the other thread, for a race.
    static func onDispatchThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let box = Locked<Result<T, any Error>?>(nil)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                let result = Result { try body() }
                box.withLock { $0 = result }
                continuation.resume()
            }
        }
        return try box.withLock { $0 }!.get()
    }

    /// Folders under the root whose names are valid store names.
    package func storeNames() throws -> [String] {
        let path = root.path
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let entries: [DirectoryEntry]
        do { entries = try DirectoryStream.entries(of: path) } catch {
            throw BlobStoreError.io(operation: "list folder", path: path, errno: error)
        }
        return entries.filter { $0.kind == .directory && StoreName.violation(in: $0.name) == nil }
            .map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    package func stores() async throws -> [StoreSummary] {
        var result: [StoreSummary] = []
        for name in try storeNames() {
            let store = try await openReadOnly(name)
            result.append(StoreSummary(name: name, statistics: try await store.statistics()))
        }
        return result
    }

    package func verify(_ store: String?) async throws -> [StoreVerification] { try await verify(store, repair: false) }

    /// A check opens each store read-only (it works while blobd serves the root); a repair moves
    /// files, so it opens each store for writing, waiting for its lock like any change.
    package func verify(_ store: String?, repair: Bool) async throws -> [StoreVerification] {
        let names: [String]
        if let store {
            try requireStore(store)
            names = [store]
        } else {
            names = try storeNames()
        }
        var result: [StoreVerification] = []
        for name in names {
            let store = repair ? try await open(name) : try await openReadOnly(name)
            result.append(StoreVerification(name: name, report: try await store.verify(repair: repair)))
        }
        return result
    }

    package func changes(_ store: String?, status: @escaping @Sendable (WatchStatus) -> Void) async throws -> AsyncStream<BlobChange> {
        throw UsageError(
            "'watch' needs the daemon: with --root only changes made by this same process could be seen; start blobd and drop --root",
            command: "watch")
    }
}

/// What `watch` tells its user about the source of the events.
package enum WatchStatus: Sendable, Hashable {
    /// The connection to the daemon was lost; it is being re-established.
    case reconnecting
    /// Connected again; events resume after the one with this id (`nil`: none was seen).
    case resumed(afterEventID: String?)
}

/// How the command line chose its backend.
package enum BackendChoice: Sendable, Hashable {
    /// `--root DIR`.
    case embedded(root: String)
    /// The daemon at this socket (`--socket`, `$BLOB_SOCKET`, or the default).
    case daemon(socket: String)
    /// `--backend s3://BUCKET[/PREFIX]`: the stores in a bucket, without a daemon.
    case s3(location: String)

    /// `--root` or `--backend` (never both); else `--socket`, else `$BLOB_SOCKET`, else ``defaultSocketPath(environment:)``.
    package static func resolve(_ globals: GlobalOptions, environment: [String: String]) -> BackendChoice {
        if let root = globals.root { return .embedded(root: root) }
        if let backend = globals.backend { return .s3(location: backend) }
        if let socket = globals.socket { return .daemon(socket: socket) }
        return .daemon(socket: DaemonSocket.clientPath(environment: environment))
    }

    /// `$XDG_RUNTIME_DIR/blobstore/blobd.sock`, else `/tmp/blobstore-$UID/blobd.sock`.
    package static func defaultSocketPath(environment: [String: String]) -> String {
        DaemonSocket.defaultPath(environment: environment)
    }
}

/// Makes the daemon backend for a socket path. The integrator supplies one (see ``BlobCLI/run(_:environment:console:daemon:)``);
/// it should throw ``CLIError/daemonUnreachable(socket:reason:)`` when nothing answers.
package typealias DaemonConnector = @Sendable (_ socketPath: String) async throws -> any BlobBackend
