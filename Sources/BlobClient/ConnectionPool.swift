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
    private let idle = Locked<[Connection]>([])

    init(socketPath: String, configuration: BlobClient.Configuration) {
        self.socketPath = socketPath
        self.configuration = configuration
    }

    deinit { closeAll() }

    /// An idle connection that still looks open, else a new one. Blocking.
    func acquire() throws -> Connection {
        let idleLimit = configuration.idleTimeout
        var discarded: [Connection] = []
        defer { for connection in discarded { connection.close() } }
        while let connection = idle.withLock({ $0.popLast() }) {
            // Read the clock after taking the connection: one released by another thread a moment
            // ago may carry a later time than a clock read before the loop.
            let idleFor = max(.zero, ContinuousClock.now - connection.idleSince)
            if idleFor > idleLimit || connection.looksStale {
                discarded.append(connection)
                continue
            }
            connection.isReused = true
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
    func release(_ connection: Connection) {
        connection.idleSince = .now
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < configuration.poolSize else { return false }
            idle.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    /// Closes every idle connection.
    func closeAll() {
        let all = idle.withLock { idle -> [Connection] in
            defer { idle.removeAll() }
            return idle
        }
        for connection in all { connection.close() }
    }
}
