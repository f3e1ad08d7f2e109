import HTTP1

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

    /// The next piece of the body, at most `limit` bytes; `nil` once the body is complete.
    mutating func next(from connection: Connection, limit: Int) throws(TransportError) -> [UInt8]? {
        let limit = max(1, limit)
        while true {
            switch state {
            case .done:
                return nil
            case .remaining(let remaining):
                if connection.available == 0 {
                    if try connection.fill(timeout: timeout, operation: "reading the response body") == 0 {
                        throw .closed(beforeResponse: false)
                    }
                }
                let bytes = connection.take(upTo: Int(min(Int64(limit), remaining)))
                let left = remaining - Int64(bytes.count)
                state = left == 0 ? .done : .remaining(left)
                return bytes
            case .chunked(var decoder):
                if connection.available == 0 {
                    if try connection.fill(timeout: timeout, operation: "reading the response body") == 0 {
                        throw .closed(beforeResponse: false)
                    }
                }
                var ranges: [Range<Int>] = []
                let fed = min(limit, connection.available)
                let outcome: Result<(Int, [UInt8]), ChunkedDecodingError> = connection.withUnconsumedBytes { raw in
                    let slice = UnsafeRawBufferPointer(rebasing: raw[0..<fed])
                    do throws(ChunkedDecodingError) {
                        let consumed = try decoder.decode(slice, payload: &ranges)
                        var payload: [UInt8] = []
                        for range in ranges { payload.append(contentsOf: slice[range]) }
                        return .success((consumed, payload))
                    } catch { return .failure(error) }
                }
                switch outcome {
                case .success(let (consumed, payload)):
                    connection.consume(consumed)
                    state = decoder.isComplete ? .done : .chunked(decoder)
                    if !payload.isEmpty { return payload }
                case .failure(let error):
                    throw .malformed("bad chunked body from blobd: \(error)")
                }
            case .untilClose:
                if connection.available == 0 {
                    if try connection.fill(timeout: timeout, operation: "reading the response body") == 0 {
                        state = .done
                        return nil
                    }
                }
                return connection.take(upTo: limit)
            }
        }
    }

    /// The rest of the body.
    mutating func readAll(from connection: Connection) throws(TransportError) -> [UInt8] {
        var body: [UInt8] = []
        if case .remaining(let length) = state { body.reserveCapacity(Int(clamping: length)) }
        while let piece = try next(from: connection, limit: 1 << 20) { body += piece }
        return body
    }
}
