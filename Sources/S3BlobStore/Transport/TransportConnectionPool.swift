internal import BlobSystem
import Dispatch

/// The connections to one endpoint: a bound on requests in flight, and the idle keep-alive
/// connections waiting for the next one.
///
/// A request holds a slot from ``reserve(timeout:)`` until its response is read or abandoned
/// (``releaseSlot()``), so at most ``TransportConfiguration/maximumConnectionsPerEndpoint``
/// connections are busy, and at most ``TransportConfiguration/maximumIdleConnectionsPerEndpoint``
/// more wait idle. The idle list is guarded by its lock; a connection taken from it belongs to the
/// taker alone.
final class TransportConnectionPool: Sendable {
    let endpoint: TransportEndpoint
    let configuration: TransportConfiguration
    private let idle: IdleConnections
    /// Counts free slots. Every `wait` that succeeds is matched by one `signal` (a response holds the
    /// pool strongly until it gives its slot back, so the semaphore is never freed while in use).
    private let slots: DispatchSemaphore

    init(endpoint: TransportEndpoint, configuration: TransportConfiguration) {
        self.endpoint = endpoint
        self.configuration = configuration
        slots = DispatchSemaphore(value: configuration.maximumConnectionsPerEndpoint)
        idle = IdleConnections(maximumCount: configuration.maximumIdleConnectionsPerEndpoint, lifetime: configuration.idleConnectionLifetime)
    }

    /// Takes a slot for one request, waiting at most `timeout` for one to free up; `false` if none did.
    func reserve(timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
        return slots.wait(timeout: .now() + .nanoseconds(max(0, nanoseconds))) == .success
    }

    /// Gives a slot back.
    func releaseSlot() {
        slots.signal()
    }

    /// The most recently used idle connection that is still young and open, if any; others met on
    /// the way are closed.
    func takeIdle() -> TransportConnection? { idle.take() }

    /// Puts back a connection whose exchange completed and that may carry another one.
    func putBack(_ connection: TransportConnection) { idle.put(connection) }

    /// Closes every idle connection.
    func closeIdle() { idle.closeAll() }

    /// How many idle connections are kept now.
    var idleCount: Int { idle.count }
}
