import BlobProtocol
import BlobStore
internal import BlobSystem
import Foundation
import HTTP1

/// A client of the `blobd` daemon (HTTP/1.1 over its Unix socket), handing out ``RemoteBlobStore``s
/// that conform to ``BlobStore/BlobStoring`` like the embedded stores.
///
/// ```swift
/// let store: any BlobStoring = try BlobClient().store("photos")   // instead of PersistentDataStore(…)
/// ```
///
/// Socket I/O runs on a dedicated dispatch queue, never on the cooperative thread pool.
public final class BlobClient: Sendable {
    /// Timeouts and pooling.
    public struct Configuration: Hashable, Sendable {
        /// Longest wait for the daemon to accept a connection.
        public var connectTimeout: Duration
        /// Longest wait for the daemon to make progress (accept request bytes or send response bytes).
        public var requestTimeout: Duration
        /// Pooled connections unused this long are closed rather than reused.
        public var idleTimeout: Duration
        /// At most this many idle keep-alive connections are kept for reuse.
        public var poolSize: Int

        /// Creates a configuration: connect 5 s, request 30 s, idle 60 s, 8 pooled connections.
        public init(
            connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(60),
            poolSize: Int = 8
        ) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.idleTimeout = idleTimeout
            self.poolSize = max(0, poolSize)
        }
    }

    /// The socket this client connects to.
    public let socketPath: String
    /// The configuration in force.
    public let configuration: Configuration
    let transport: Transport

    /// Where `blobd` listens by default: `$BLOB_SOCKET` if set, else `$XDG_RUNTIME_DIR/blobstore/blobd.sock`
    /// when `XDG_RUNTIME_DIR` is an absolute path, else `/tmp/blobstore-$UID/blobd.sock`.
    public static var defaultSocketPath: String {
        DaemonSocket.clientPath(environment: ProcessInfo.processInfo.environment)
    }

    /// Creates a client of the daemon at `socketPath`; nothing is connected until the first request.
    public init(socketPath: String = BlobClient.defaultSocketPath, configuration: Configuration = .init()) {
        self.socketPath = socketPath
        self.configuration = configuration
        transport = Transport(pool: ConnectionPool(socketPath: socketPath, configuration: configuration))
    }

    /// The store `name` on the daemon (created by its first put); throws `invalidStoreName`.
    public func store(_ name: String) throws -> RemoteBlobStore {
        try StoreName.validate(name)
        return RemoteBlobStore(name: name, client: self)
    }

    /// Asks the daemon to check every blob of `store` against its checksum (`GET /v1/stores/{store}/verify`).
    public func verify(store: String) async throws -> VerificationReport { try await verify(store: store, repair: false) }

    /// ``verify(store:)``, and with `repair` (`POST /v1/stores/{store}/verify`) the daemon also moves
    /// every corrupt and orphaned entry into the store's `quarantine/` folder, listed in the report's
    /// `quarantined`.
    public func verify(store: String, repair: Bool) async throws -> VerificationReport {
        try StoreName.validate(store)
        let request = Request(method: repair ? .post : .get, target: Route.verify(store: store).target, body: repair ? .data(Data()) : .none)
        let response = try await send(request, context: .init(store: store))
        do {
            return try ReportJSON.decodeReport(response.body)
        } catch {
            throw BlobClientError.protocolError("verify answer for store '\(store)' is not a report: \(error)")
        }
    }

    /// Every store under the daemon's root with its totals, sorted by name.
    public func stores() async throws -> [StoreSummary] {
        let response = try await send(Request(method: .get, target: Route.stores.target), context: .init())
        return try WireDecoding.stores(from: response.body)
    }

    /// Whether the daemon answers `GET /v1/health` with `{"status":"ok"}`; throws if it cannot be reached.
    public func health() async throws -> Bool {
        let response = try await send(Request(method: .get, target: Route.health.target), context: .init())
        return ReportJSON.isHealthy(response.body)
    }

    /// Closes the idle pooled connections (they are reopened on demand).
    public func closeIdleConnections() {
        transport.pool.closeAll()
    }

    // MARK: Internal

    /// Sends `request` on the I/O queue; error statuses (≥ 300 except those in `accepting`) are thrown, mapped.
    func send(_ request: Request, context: ErrorMapping.Context, accepting: Set<Int> = []) async throws -> FullResponse {
        let transport = self.transport
        let response = try await BlockingThreads.run { try transport.send(request) }
        if response.status >= 300 && !accepting.contains(response.status) {
            throw ErrorMapping.error(status: response.status, headers: response.headers, body: response.body, context: context)
        }
        return response
    }
}
