import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// Reads one response from a ``Connection``: the head (skipping `100 Continue`), then the body
/// piece by piece according to its framing (HTTP1's ``HTTPResponseInput`` and ``HTTPResponseBody``).
struct ResponseReader {
    /// The final response head.
    let response: HTTPResponseParser.Response
    private var body: HTTPResponseBody
    private let timeout: Duration?

    /// Whether the whole body has been read.
    var isComplete: Bool { body.isComplete }

    /// Reads the head of the response to a `method` request.
    init(connection: Connection, method: HTTPMethod, timeout: Duration?) throws(TransportError) {
        let input = DaemonInput(connection: connection, timeout: timeout, operation: "waiting for the response")
        let head: HTTPResponseParser.Response?
        do { head = try input.readHead(method: method) } catch { throw input.transportError(error) }
        guard let head else { throw .malformed("blobd answered 100 Continue where a final response was due") }
        response = head
        body = HTTPResponseBody(head.framing)
        self.timeout = timeout
    }

    /// Copies the next piece of the body into `destination` (at most its size); returns how many
    /// bytes, or `nil` once the body is complete.
    mutating func read(into destination: UnsafeMutableRawBufferPointer, from connection: Connection) throws(TransportError) -> Int? {
        let input = DaemonInput(connection: connection, timeout: timeout, operation: "reading the response body")
        do { return try body.read(into: destination, from: input) } catch { throw input.transportError(error) }
    }

    /// The next piece of the body, at most `limit` bytes; `nil` once the body is complete.
    mutating func next(from connection: Connection, limit: Int) throws(TransportError) -> [UInt8]? {
        var piece = ResponseReader.zeroedBytes(max(1, limit))
        let result: Result<Int?, TransportError> = piece.withUnsafeMutableBytes { raw in
            do throws(TransportError) { return .success(try read(into: raw, from: connection)) } catch { return .failure(error) }
        }
        guard let count = try result.get() else { return nil }
        piece.removeSubrange(count...)
        return piece
    }

    /// The rest of the body.
    mutating func readAll(from connection: Connection) throws(TransportError) -> [UInt8] {
        var body: [UInt8] = []
        var filled = 0
        var room = 64 * 1024
        if case .remaining(let length) = self.body { room = Int(clamping: length) }
        while true {
            if filled == body.count {
                var grown = ResponseReader.zeroedBytes(filled + max(room, 1))
                if filled > 0 {
                    grown.withUnsafeMutableBytes { target in body.withUnsafeBytes { target.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: filled) } }
                }
                body = grown
                room = max(room, filled)
            }
            let result: Result<Int?, TransportError> = body.withUnsafeMutableBytes { raw in
                do throws(TransportError) {
                    return .success(try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]), from: connection))
                } catch { return .failure(error) }
            }
            guard let count = try result.get() else { break }
            filled += count
        }
        if filled < body.count { body.removeSubrange(filled...) }
        return body
    }

    /// `count` zero bytes, set with `memset` (array initialisers run per byte in debug builds).
    static func zeroedBytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { memset(buffer.baseAddress!, 0, count) }
            initialized = count
        }
    }
}

/// A daemon connection as HTTP1's response reading sees it: receiving waits at most `timeout`, and
/// failures name `operation`.
private struct DaemonInput: HTTPResponseInput {
    let connection: Connection
    let timeout: Duration?
    let operation: String

    var available: Int { connection.available }
    func withUnconsumedBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { connection.withUnconsumedBytes(body) }
    func consume(_ count: Int) { connection.consume(count) }
    func take(into destination: UnsafeMutableRawBufferPointer) -> Int { connection.take(into: destination) }
    func fill() throws(TransportError) -> Int { try connection.fill(timeout: timeout, operation: operation) }
    func receive(into destination: UnsafeMutableRawBufferPointer) throws(TransportError) -> Int {
        try connection.receive(into: destination, timeout: timeout, operation: operation)
    }

    /// The client's form of a reading failure.
    func transportError(_ error: HTTPResponseReadError<TransportError>) -> TransportError {
        switch error {
        case .input(let failure): failure
        case .ended: .closed(beforeResponse: !connection.receivedResponseByte)
        case .malformedHead(let parse): .malformed("unparsable response head from blobd: \(parse)")
        case .malformedChunked(let chunked): .malformed("bad chunked body from blobd: \(chunked)")
        }
    }
}
