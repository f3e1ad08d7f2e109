internal import BlobSystem
import Dispatch

/// Keep-alive connections to one socket path, handed out to one exchange at a time.
///
/// At most ``BlobClient/Configuration/poolSize`` idle connections are kept; connections idle
/// longer than ``BlobClient/Configuration/idleTimeout``, or that the daemon closed while they
/// were idle, are discarded on the next ``acquire()``.
final class ConnectionPool: Sendable {
    let socketPath: String
    let configuration: BlobClient.Configuration
    private let idle: IdleConnections

    init(socketPath: String, configuration: BlobClient.Configuration) {
        self.socketPath = socketPath
        self.configuration = configuration
        idle = IdleConnections(maximumCount: configuration.poolSize, lifetime: configuration.idleTimeout)
    }

    /// An idle connection that still looks open, else a new one. Blocking.
    func acquire() throws -> Connection {
        if let connection = idle.take() {
            connection.beginExchange()
            return connection
        }
        return try fresh()
    }

    /// A new connection. Blocking.
    func fresh() throws -> Connection {
        let connection = try Connection.open(path: socketPath, timeout: configuration.connectTimeout)
        connection.beginExchange()
        return connection
    }

    /// Returns a connection whose exchange completed and that may carry another one.
    func release(_ connection: Connection) { idle.put(connection) }

    /// Closes every idle connection.
    func closeAll() { idle.closeAll() }
}
