internal import BlobSystem
package import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// A response whose head has arrived; its body is read piece by piece with ``read(into:)`` (in
/// bounded memory, however large), or whole with ``readAll(limit:)``.
///
/// Reading the body to its end puts the connection back in the pool when it may carry another
/// request; ``close()`` (or dropping the response) before the end closes the connection instead.
/// Used by one thread at a time: unchecked `Sendable` so it can be handed from the thread that
/// started the request to the one reading the body.
package final class TransportResponse: @unchecked Sendable {
    /// The status.
    package let status: HTTPStatus
    /// The fields.
    package let headers: HTTPHeaders
    /// The body's length when the gateway declared one (`Content-Length`), else `nil`.
    package let contentLength: Int64?

    private var connection: TransportConnection?
    private var body: HTTPResponseBody
    private let reusable: Bool
    private let pool: TransportConnectionPool?
    private let external: (any TransportResponseBody)?
    private let endpoint: TransportEndpoint
    private let method: HTTPMethod
    private let path: String

    init(
        response: HTTPResponseParser.Response, connection: TransportConnection, reusable: Bool,
        pool: TransportConnectionPool, method: HTTPMethod, path: String
    ) {
        status = response.status
        headers = response.headers
        self.connection = connection
        self.reusable = reusable && response.keepAlive
        self.pool = pool
        external = nil
        endpoint = pool.endpoint
        self.method = method
        self.path = path
        body = HTTPResponseBody(response.framing)
        switch response.framing {
        case .none: contentLength = method == .head ? response.headers.first(.contentLength).flatMap { Int64($0) } : 0
        case .contentLength(let length): contentLength = length
        case .chunked, .untilClose: contentLength = nil
        }
        if body.isComplete { finish() }
    }

    /// A response whose body is read from `external` (HTTPS, see ``HTTPSTransport``).
    init(
        status: HTTPStatus, headers: HTTPHeaders, contentLength: Int64?, external: any TransportResponseBody,
        endpoint: TransportEndpoint, method: HTTPMethod, path: String
    ) {
        self.status = status
        self.headers = headers
        self.contentLength = contentLength
        connection = nil
        body = .untilClose
        reusable = false
        pool = nil
        self.external = external
        self.endpoint = endpoint
        self.method = method
        self.path = path
    }

    deinit { close() }

    /// Whether the whole body has been read.
    package var isComplete: Bool {
        if let external { return external.isComplete }
        return body.isComplete
    }

    /// Copies the next piece of the body into `destination` (at most its size) and returns how many
    /// bytes; `nil` once the body is complete. Waits at most the idle timeout for more bytes.
    package func read(into destination: UnsafeMutableRawBufferPointer) throws(TransportError) -> Int? {
        do throws(TransportError) {
            if let external { return try external.read(into: destination) }
            return try readPiece(into: destination)
        } catch {
            close()
            throw error
        }
    }

    /// The rest of the body; throws if it exceeds `limit` bytes (the connection is then closed).
    package func readAll(limit: Int = 16 << 20) throws(TransportError) -> [UInt8] {
        var collected: [UInt8] = []
        if let contentLength, contentLength <= Int64(limit) { collected.reserveCapacity(Int(contentLength)) }
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { piece.deallocate() }
        while let count = try read(into: piece) {
            guard collected.count + count <= limit else {
                close()
                throw failure(.malformedResponse("the body is longer than the \(limit) bytes expected"))
            }
            collected.append(contentsOf: UnsafeRawBufferPointer(rebasing: piece[0..<count]))
        }
        return collected
    }

    /// Reads and drops the rest of the body (so the connection can be reused), up to `limit` bytes;
    /// a longer rest closes the connection instead.
    package func discard(limit: Int = 1 << 20) {
        if case .remaining(let left) = body, left > Int64(limit) {
            close()
            return
        }
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)
        defer { piece.deallocate() }
        var dropped = 0
        while dropped <= limit, let count = try? read(into: piece) { dropped += count }
        close()
    }

    /// Abandons the response: closes the connection unless the body was read to its end (then the
    /// connection is already back in the pool). Idempotent.
    package func close() {
        external?.close()
        guard let connection else { return }
        self.connection = nil
        connection.close()
        pool?.releaseSlot()
    }

    // MARK: Internals

    private func finish() {
        guard let connection else { return }
        self.connection = nil
        if reusable && connection.available == 0 {
            pool?.putBack(connection)
        } else {
            connection.close()
        }
        pool?.releaseSlot()
    }

    private func failure(_ reason: TransportError.Reason) -> TransportError {
        TransportError(endpoint: endpoint, method: method, path: path, reason: reason)
    }

    private func readPiece(into destination: UnsafeMutableRawBufferPointer) throws(TransportError) -> Int? {
        if body.isComplete { return nil }
        guard let connection else { throw failure(.malformedResponse("the response was closed before its body was read")) }
        guard destination.count > 0 else { return 0 }
        guard let pool else { return nil }
        let input = GatewayInput(connection: connection, idleTimeout: pool.configuration.idleTimeout)
        let count: Int?
        do { count = try body.read(into: destination, from: input) } catch { throw failure(input.reason(error)) }
        if body.isComplete { finish() }
        return count
    }
}

/// A whole response: status, fields and body.
package struct TransportFullResponse: Sendable {
    /// The status.
    package let status: HTTPStatus
    /// The fields.
    package let headers: HTTPHeaders
    /// The body.
    package let body: [UInt8]
}
