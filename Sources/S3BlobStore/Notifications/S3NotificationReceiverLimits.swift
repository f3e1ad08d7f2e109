/// The bounds of an ``S3NotificationReceiver``: what one sender can make it hold or wait for.
package struct S3NotificationReceiverLimits: Sendable, Hashable {
    /// The largest request body accepted; a larger one gets `413` and the connection is closed.
    /// The gateway sends one record per request, about 1 KiB.
    package var bodyByteLimit: Int
    /// The most connections served at once; one more gets `503` and is closed (the gateway
    /// retries a persistent topic's delivery).
    package var connectionLimit: Int
    /// How long a connection may stay silent (between requests, or within one) before it is closed.
    package var readTimeout: Duration
    /// The most events waiting for the handler; while it is full, requests get `503` so the
    /// gateway keeps the events and retries, rather than the receiver dropping them.
    package var queueLimit: Int

    /// Limits; the defaults suit a gateway on the same network.
    package init(bodyByteLimit: Int = 1 << 20, connectionLimit: Int = 32, readTimeout: Duration = .seconds(60), queueLimit: Int = 100_000) {
        self.bodyByteLimit = bodyByteLimit
        self.connectionLimit = connectionLimit
        self.readTimeout = readTimeout
        self.queueLimit = queueLimit
    }
}
