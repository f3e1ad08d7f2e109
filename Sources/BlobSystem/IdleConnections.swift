/// Keep-alive connections waiting for their next exchange, most recently used first out: the idle
/// half of a client's connection pool (blobd's client and the S3 transport each keep one per
/// socket or endpoint).
///
/// At most `maximumCount` wait; one idle longer than `lifetime`, or whose peer closed it while it
/// waited, is closed when met instead of being handed out. The list is guarded by its lock; a
/// connection taken from it belongs to the taker alone.
package final class IdleConnections: Sendable {
    private let maximumCount: Int
    private let lifetime: Duration
    private let idle = Locked<[StreamConnection]>([])

    /// An empty list keeping at most `maximumCount` connections, each for at most `lifetime`.
    package init(maximumCount: Int, lifetime: Duration) {
        self.maximumCount = maximumCount
        self.lifetime = lifetime
    }

    deinit { closeAll() }

    /// The most recently used idle connection that is still young and open, marked reused; `nil`
    /// when none is. Closes the others met on the way.
    package func take() -> StreamConnection? {
        var discarded: [StreamConnection] = []
        defer { for connection in discarded { connection.close() } }
        while let connection = idle.withLock({ $0.popLast() }) {
            // The clock is read after taking the connection: one put back by another thread a moment
            // ago may carry a later time than a clock read before the loop.
            if ContinuousClock.now - connection.idleSince > lifetime || connection.looksStale {
                discarded.append(connection)
                continue
            }
            connection.isReused = true
            return connection
        }
        return nil
    }

    /// Keeps a connection whose exchange completed and that may carry another one (closes it when
    /// the list is full).
    package func put(_ connection: StreamConnection) {
        connection.idleSince = .now
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < maximumCount else { return false }
            idle.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    /// Closes every idle connection.
    package func closeAll() {
        let all = idle.withLock { idle -> [StreamConnection] in
            defer { idle.removeAll() }
            return idle
        }
        for connection in all { connection.close() }
    }

    /// How many connections wait now.
    package var count: Int { idle.withLock { $0.count } }
}
