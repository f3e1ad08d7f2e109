import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// Reads one response from a ``Connection``: the head (skipping `100 Continue`), then the body
/// piece by piece according to its framing.
struct ResponseReader {
    /// The final response head.
    let response: HTTPResponseParser.Response
    private var state: State
    private let timeout: Duration?

    private enum State {
        case remaining(Int64)
        case chunked(ChunkedDecoder)
        case untilClose
        case done
    }

    /// Whether the whole body has been read.
    var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Reads the head of the response to a `method` request.
    init(connection: Connection, method: HTTPMethod, timeout: Duration?) throws(TransportError) {
        var parser = HTTPResponseParser()
        while true {
            if connection.available > 0 {
                let result = connection.withUnconsumedBytes { parser.parse($0, requestMethod: method) }
                switch result {
                case .complete(let response, let consumed):
                    connection.consume(consumed)
                    parser.reset()
                    if response.isInterim { continue }
                    self.response = response
                    self.timeout = timeout
                    switch response.framing {
                    case .none: state = .done
                    case .contentLength(let length): state = length == 0 ? .done : .remaining(length)
                    case .chunked: state = .chunked(ChunkedDecoder())
                    case .untilClose: state = .untilClose
                    }
                    return
                case .failed(let error):
                    throw .malformed("unparsable response head from blobd: \(error)")
                case .needMore:
                    break
                }
            }
            if try connection.fill(timeout: timeout, operation: "waiting for the response") == 0 {
                throw .closed(beforeResponse: !connection.receivedResponseByte)
            }
        }
    }

    /// Copies the next piece of the body into `destination` (at most its size); returns how many
    /// bytes, or `nil` once the body is complete. Bytes move with `memcpy` or straight from the
    /// socket, never one at a time (debug builds run generic per-byte code slowly).
    mutating func read(into destination: UnsafeMutableRawBufferPointer, from connection: Connection) throws(TransportError) -> Int? {
        guard destination.count > 0 else { return isComplete ? nil : 0 }
        while true {
            switch state {
            case .done:
                return nil
            case .remaining(let remaining):
                let wanted = Int(min(Int64(destination.count), remaining))
                let target = UnsafeMutableRawBufferPointer(rebasing: destination[0..<wanted])
                let count: Int
                if connection.available > 0 {
                    count = connection.take(into: target)
                } else {
                    count = try connection.receive(into: target, timeout: timeout, operation: "reading the response body")
                    if count == 0 { throw .closed(beforeResponse: false) }
                }
                let left = remaining - Int64(count)
                state = left == 0 ? .done : .remaining(left)
                return count
            case .chunked(var decoder):
                if connection.available == 0 {
                    if try connection.fill(timeout: timeout, operation: "reading the response body") == 0 {
                        throw .closed(beforeResponse: false)
                    }
                }
                let outcome: Result<(consumed: Int, copied: Int), ChunkedDecodingError> = connection.withUnconsumedBytes { raw in
                    do throws(ChunkedDecodingError) { return .success(try decoder.decode(raw, into: destination)) } catch { return .failure(error) }
                }
                switch outcome {
                case .success(let (consumed, copied)):
                    connection.consume(consumed)
                    state = decoder.isComplete ? .done : .chunked(decoder)
                    if copied > 0 { return copied }
                case .failure(let error):
                    throw .malformed("bad chunked body from blobd: \(error)")
                }
            case .untilClose:
                if connection.available > 0 { return connection.take(into: destination) }
                let count = try connection.receive(into: destination, timeout: timeout, operation: "reading the response body")
                if count == 0 {
                    state = .done
                    return nil
                }
                return count
            }
        }
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
        if case .remaining(let length) = state { room = Int(clamping: length) }
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
