/// The transport's timeouts and connection limits.
///
/// Every wait is bounded, so a stalled gateway costs each request waiting on it at most its
/// timeout and never holds up requests on other connections.
package struct TransportConfiguration: Sendable, Hashable {
    /// Longest wait for a TCP connection to be established (all resolved addresses together).
    package var connectTimeout: Duration
    /// Longest wait, after the request is sent, for the first byte of the response.
    package var firstByteTimeout: Duration
    /// Longest wait for progress in the middle of a transfer: the peer accepting more of the
    /// request, or sending more of the response.
    package var idleTimeout: Duration
    /// Requests in flight per endpoint at most; one more waits up to ``connectTimeout`` for one to end.
    package var maximumConnectionsPerEndpoint: Int
    /// Idle keep-alive connections kept per endpoint at most.
    package var maximumIdleConnectionsPerEndpoint: Int
    /// An idle connection older than this is closed instead of reused (the gateway may have dropped it).
    package var idleConnectionLifetime: Duration
    /// How long a request sent with `Expect: 100-continue` waits for the go-ahead before it sends
    /// its body anyway.
    package var continueTimeout: Duration

    /// Creates a configuration; the defaults suit a gateway on the same network.
    package init(
        connectTimeout: Duration = .seconds(5), firstByteTimeout: Duration = .seconds(30),
        idleTimeout: Duration = .seconds(30), maximumConnectionsPerEndpoint: Int = 64,
        maximumIdleConnectionsPerEndpoint: Int = 16, idleConnectionLifetime: Duration = .seconds(20),
        continueTimeout: Duration = .seconds(1)
    ) {
        precondition(maximumConnectionsPerEndpoint > 0 && maximumIdleConnectionsPerEndpoint >= 0, "connection limits must be positive")
        self.connectTimeout = connectTimeout
        self.firstByteTimeout = firstByteTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnectionsPerEndpoint = maximumConnectionsPerEndpoint
        self.maximumIdleConnectionsPerEndpoint = maximumIdleConnectionsPerEndpoint
        self.idleConnectionLifetime = idleConnectionLifetime
        self.continueTimeout = continueTimeout
    }

    /// The defaults with `timeout` as the first-byte and idle timeouts, and no longer connect (and
    /// free-connection) or continue waits than `timeout`: what `blobd --s3-timeout` sets.
    package init(timeout: Duration) {
        let defaults = TransportConfiguration()
        self.init(
            connectTimeout: min(defaults.connectTimeout, timeout), firstByteTimeout: timeout, idleTimeout: timeout,
            continueTimeout: min(defaults.continueTimeout, timeout))
    }
}
