internal import BlobSystem
internal import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 client over TCP with a keep-alive connection pool per endpoint, for the S3 backend.
///
/// **Blocking, by design**: every method blocks the calling thread on `poll` and socket calls, so
/// it must be called from threads of the caller's own (``BlockingThreads`` has some), never from the
/// Swift cooperative pool, whose few threads would otherwise sit in `poll` while every task waits.
/// Blocking calls on dedicated threads keep the transport a plain loop over the `HTTP1` codec, with
/// no event loop of its own; every wait is bounded by ``TransportConfiguration``'s timeouts.
///
/// Retry rule: a request that fails on a reused keep-alive connection before any byte of a
/// response arrived (the gateway closed the connection while it sat idle, racing the request) is
/// sent once more on a fresh connection, if it is idempotent or none of it was sent, and its body can
/// be sent again. Timeouts are never retried: a stalled gateway should cost one wait, not two.
package final class HTTPTransport: Sendable {
    /// The timeouts and limits.
    package let configuration: TransportConfiguration
    private let pools = Locked<[TransportEndpoint: TransportConnectionPool]>([:])

    /// Creates a transport; connections are opened on demand.
    package init(configuration: TransportConfiguration = TransportConfiguration()) {
        self.configuration = configuration
    }

    /// Sends `request` to `endpoint` and returns once the response head has arrived; the body is
    /// read from the returned response. Blocking.
    package func start(_ request: TransportRequest, to endpoint: TransportEndpoint) throws(TransportError) -> TransportResponse {
        let pool = pool(for: endpoint)
        let path = request.path
        func failure(_ reason: TransportError.Reason) -> TransportError {
            TransportError(endpoint: endpoint, method: request.method, path: path, reason: reason)
        }
        guard pool.reserve(timeout: configuration.connectTimeout) else {
            throw failure(.timedOut(.waitingForConnection, configuration.connectTimeout))
        }
        var connection: TransportConnection
        if let idle = pool.takeIdle() {
            connection = idle
        } else {
            do throws(TransportError) { connection = try open(endpoint, failure: failure) } catch {
                pool.releaseSlot()
                throw error
            }
        }
        var retried = false
        var bodyPulled = false
        while true {
            connection.beginExchange()
            do throws(TransportError) {
                let (response, reusable) = try exchange(request, to: endpoint, on: connection, bodyPulled: &bodyPulled, failure: failure)
                return TransportResponse(response: response, connection: connection, reusable: reusable, pool: pool, method: request.method, path: path)
            } catch {
                connection.close()
                let replayable: Bool
                if case .stream = request.body { replayable = !bodyPulled } else { replayable = true }
                if !retried, connection.isReused, !connection.receivedResponseByte, error.isConnectionLoss,
                    request.isIdempotent || !connection.sentRequestByte, replayable
                {
                    retried = true
                    do throws(TransportError) { connection = try open(endpoint, failure: failure) } catch {
                        pool.releaseSlot()
                        throw error
                    }
                    continue
                }
                pool.releaseSlot()
                throw error
            }
        }
    }

    /// Sends `request` and reads the whole response (a body over `responseLimit` bytes is an error).
    /// Blocking.
    package func send(_ request: TransportRequest, to endpoint: TransportEndpoint, responseLimit: Int = 16 << 20) throws(TransportError) -> TransportFullResponse {
        let response = try start(request, to: endpoint)
        let body = try response.readAll(limit: responseLimit)
        return TransportFullResponse(status: response.status, headers: response.headers, body: body)
    }

    /// Closes every idle connection (busy ones close when their responses end).
    package func closeIdleConnections() {
        let all = pools.withLock { Array($0.values) }
        for pool in all { pool.closeIdle() }
    }

    /// How many idle keep-alive connections to `endpoint` the pool holds.
    package func idleConnectionCount(for endpoint: TransportEndpoint) -> Int {
        pools.withLock { $0[endpoint] }?.idleCount ?? 0
    }

    // MARK: Internals

    /// An object's user metadata comes back as one `x-amz-meta-*` field each, bounded only by the
    /// gateway's request-header block (~16 KiB on radosgw), so allow many more fields than a
    /// request parser would.
    static let responseHeadLimits = HTTPHeadLimits(maxStartLineLength: 8 * 1024, maxHeadSize: 256 * 1024, maxHeaderCount: 4096)

    private func pool(for endpoint: TransportEndpoint) -> TransportConnectionPool {
        pools.withLock { pools in
            if let pool = pools[endpoint] { return pool }
            let pool = TransportConnectionPool(endpoint: endpoint, configuration: configuration)
            pools[endpoint] = pool
            return pool
        }
    }

    private func open(_ endpoint: TransportEndpoint, failure: (TransportError.Reason) -> TransportError) throws(TransportError) -> TransportConnection {
        do {
            return try TransportConnection.open(endpoint, timeout: configuration.connectTimeout)
        } catch {
            switch error {
            case .unresolvable(_, let reason): throw failure(.unresolvable(reason))
            case .system(let errno): throw failure(.connect(errno))
            case .timedOut(let timeout): throw failure(.timedOut(.connecting, timeout))
            }
        }
    }

    /// Sends the request and reads the final response head. Returns it and whether the connection
    /// may carry another request after its body.
    private func exchange(
        _ request: TransportRequest, to endpoint: TransportEndpoint, on connection: TransportConnection, bodyPulled: inout Bool,
        failure: (TransportError.Reason) -> TransportError
    ) throws(TransportError) -> (HTTPResponseParser.Response, Bool) {
        let sendsExpect = request.expectsContinue && request.body.length > 0
        do {
            try connection.send(request.serializedHead(endpoint: endpoint, sendsExpect: sendsExpect), timeout: configuration.idleTimeout)
        } catch {
            throw failure(error.reason(.sending))
        }
        if sendsExpect {
            // Wait a moment for the go-ahead: a final answer instead means the body is not wanted.
            let answered: Bool
            do { answered = try TCPSocket.wait(connection.socket, for: .readable, until: .now + configuration.continueTimeout) } catch {
                throw failure(error.reason(.waitingForResponse))
            }
            if answered {
                let head = try readHead(request.method, on: connection, stopAtContinue: true, failure: failure)
                if let head {
                    // The gateway answered without the body; its framing may expect one: never reuse.
                    return (head, false)
                }
            }
        }
        var answeredEarly = false
        do throws(TransportError) {
            try sendBody(request.body, on: connection, bodyPulled: &bodyPulled, failure: failure)
        } catch {
            // A gateway that answers early (an error) may stop reading and reset: its answer is
            // then the response. Anything else is the failure.
            guard case .system = error.reason, connection.receivedResponseByte || responseIsWaiting(connection) else { throw error }
            answeredEarly = true
        }
        guard let head = try readHead(request.method, on: connection, stopAtContinue: false, failure: failure) else {
            throw failure(.malformedResponse("no final response"))
        }
        return (head, !answeredEarly)
    }

    private func responseIsWaiting(_ connection: TransportConnection) -> Bool {
        ((try? connection.fill(timeout: .milliseconds(200))) ?? 0) > 0
    }

    private func sendBody(
        _ body: TransportBody, on connection: TransportConnection, bodyPulled: inout Bool,
        failure: (TransportError.Reason) -> TransportError
    ) throws(TransportError) {
        let timeout = configuration.idleTimeout
        switch body {
        case .empty:
            return
        case .bytes(let bytes):
            do { try connection.send(bytes, timeout: timeout) } catch { throw failure(error.reason(.sending)) }
        case .fileRegion(let file, let offset, let length):
            let sent: Int64
            do { sent = try connection.sendFile(file, offset: offset, length: length, timeout: timeout) } catch {
                throw failure(error.reason(.sending))
            }
            if sent < length {
                throw failure(.bodySource("the file ended \(sent) bytes into a region of \(length) from offset \(offset)"))
            }
        case .stream(let length, let source):
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
            defer { chunk.deallocate() }
            var remaining = length
            while remaining > 0 {
                bodyPulled = true
                let count: Int
                do {
                    count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<Int(min(Int64(chunk.count), remaining))]))
                } catch {
                    throw failure(.bodySource("\(error)"))
                }
                guard count > 0 else {
                    throw failure(.bodySource("the source ended after \(length - remaining) of its \(length) bytes"))
                }
                do { try connection.send(UnsafeRawBufferPointer(rebasing: chunk[0..<count]), timeout: timeout) } catch {
                    throw failure(error.reason(.sending))
                }
                remaining -= Int64(count)
            }
        }
    }

    /// Reads a response head, skipping interim ones; with `stopAtContinue`, returns `nil` at a
    /// `100 Continue` instead (the body is to be sent). The first byte may take
    /// ``TransportConfiguration/firstByteTimeout``; the rest of the head arrives within the idle timeout.
    private func readHead(
        _ method: HTTPMethod, on connection: TransportConnection, stopAtContinue: Bool,
        failure: (TransportError.Reason) -> TransportError
    ) throws(TransportError) -> HTTPResponseParser.Response? {
        let input = GatewayInput(connection: connection, idleTimeout: configuration.idleTimeout, firstByteTimeout: configuration.firstByteTimeout)
        do {
            return try input.readHead(method: method, limits: Self.responseHeadLimits, stopAtContinue: stopAtContinue)
        } catch {
            throw failure(input.reason(error))
        }
    }
}

/// A gateway connection as HTTP1's response reading sees it: until the response's first byte,
/// receiving waits at most `firstByteTimeout`, after it `idleTimeout`.
struct GatewayInput: HTTPResponseInput {
    let connection: TransportConnection
    let idleTimeout: Duration
    var firstByteTimeout: Duration?

    var available: Int { connection.available }
    func withUnconsumedBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { connection.withUnconsumedBytes(body) }
    func consume(_ count: Int) { connection.consume(count) }
    func take(into destination: UnsafeMutableRawBufferPointer) -> Int { connection.take(into: destination) }

    private var timeout: Duration { connection.receivedResponseByte ? idleTimeout : firstByteTimeout ?? idleTimeout }

    func fill() throws(TCPSocketError) -> Int { try connection.fill(timeout: timeout) }
    func receive(into destination: UnsafeMutableRawBufferPointer) throws(TCPSocketError) -> Int {
        try connection.receive(into: destination, timeout: timeout)
    }

    /// The transport's reason for a reading failure.
    func reason(_ error: HTTPResponseReadError<TCPSocketError>) -> TransportError.Reason {
        switch error {
        case .input(let failure): failure.reason(connection.receivedResponseByte ? .receiving : .waitingForResponse)
        case .ended(inHead: false) where !connection.receivedResponseByte: .closedBeforeResponse
        case .ended(inHead: true): .malformedResponse("the connection was closed in the middle of the response head")
        case .ended: .closedInBody
        case .malformedHead(let parse): .malformedResponse("unparsable response head: \(parse)")
        case .malformedChunked(let chunked): .malformedResponse("bad chunked body: \(chunked)")
        }
    }
}

extension TransportError {
    /// Whether the connection was lost (closed or reset) rather than timed out or garbled.
    var isConnectionLoss: Bool {
        switch reason {
        case .closedBeforeResponse: return true
        case .system(let errno, _): return [EPIPE, ECONNRESET, ECONNABORTED].contains(errno.rawValue)
        default: return false
        }
    }
}

extension TCPSocketError {
    /// The transport's reason for this socket failure during `phase`.
    func reason(_ phase: TransportPhase) -> TransportError.Reason {
        switch self {
        case .unresolvable(_, let why): .unresolvable(why)
        case .system(let errno): .system(errno, phase)
        case .timedOut(let timeout): .timedOut(phase, timeout)
        }
    }
}
