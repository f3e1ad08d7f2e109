internal import BlobSystem

/// One keep-alive TCP connection to an endpoint (``StreamConnection``): the pool hands it to one
/// exchange at a time.
typealias TransportConnection = StreamConnection

extension StreamConnection {
    /// The receive buffer's first size; it grows only while a response head does not fit.
    private static let transportInitialCapacity = 64 * 1024
    /// A fill asks the kernel for at least this much room.
    private static let transportMinimumRead = 16 * 1024

    /// Connects to `endpoint` within `timeout`. Each receive asks for an immediate acknowledgement
    /// (a gateway that writes head and body apart would otherwise wait for a delayed ACK).
    static func open(_ endpoint: TransportEndpoint, timeout: Duration) throws(TCPSocketError) -> StreamConnection {
        StreamConnection(
            socket: try TCPSocket.connect(host: endpoint.host, port: endpoint.port, timeout: timeout),
            initialCapacity: transportInitialCapacity, minimumRead: transportMinimumRead, acknowledgeAtOnce: true)
    }
}
