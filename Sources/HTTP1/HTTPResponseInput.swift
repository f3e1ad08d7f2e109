/// A client connection's receiving side, as ``HTTPResponseInput/readHead(_:method:limits:stopAtContinue:)``
/// and ``HTTPResponseBody`` need it: the bytes received and not yet consumed, and a way to receive
/// more. Each client provides one over its own connection type, deciding its timeouts and what its
/// failures are called; the reading of heads and bodies is then the same for all.
package protocol HTTPResponseInput {
    /// What receiving can fail with.
    associatedtype Failure: Error

    /// How many received bytes wait unconsumed.
    var available: Int { get }

    /// Runs `body` over the unconsumed received bytes.
    func withUnconsumedBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R

    /// Drops the first `count` unconsumed bytes.
    func consume(_ count: Int)

    /// Moves up to `destination.count` unconsumed bytes into `destination`; returns how many.
    func take(into destination: UnsafeMutableRawBufferPointer) -> Int

    /// Receives more bytes after the unconsumed ones (waiting for them); 0 at the end of the stream.
    func fill() throws(Failure) -> Int

    /// Receives straight into `destination` (there are no unconsumed bytes); 0 at the end of the stream.
    func receive(into destination: UnsafeMutableRawBufferPointer) throws(Failure) -> Int
}

/// Why reading a response from an ``HTTPResponseInput`` failed.
package enum HTTPResponseReadError<Failure: Error>: Error {
    /// Receiving failed.
    case input(Failure)
    /// The stream ended before the head was complete (`inHead`: after some of its bytes) or, for a
    /// body, before its end.
    case ended(inHead: Bool)
    /// The response head could not be parsed.
    case malformedHead(HTTPParseError)
    /// The chunked body is malformed.
    case malformedChunked(ChunkedDecodingError)
}

extension HTTPResponseInput {
    /// Reads the final response head to a `method` request, skipping interim (1xx) ones; with
    /// `stopAtContinue`, returns `nil` at a `100 Continue` instead (the request's body is to be sent).
    package func readHead(
        method: HTTPMethod, limits: HTTPHeadLimits = HTTPHeadLimits(), stopAtContinue: Bool = false
    ) throws(HTTPResponseReadError<Failure>) -> HTTPResponseParser.Response? {
        var parser = HTTPResponseParser(limits: limits)
        while true {
            if available > 0 {
                let result = withUnconsumedBytes { parser.parse($0, requestMethod: method) }
                switch result {
                case .complete(let response, let consumed):
                    consume(consumed)
                    parser.reset()
                    if response.isInterim {
                        if stopAtContinue && response.status.code == 100 { return nil }
                        continue
                    }
                    return response
                case .failed(let error):
                    throw .malformedHead(error)
                case .needMore:
                    break
                }
            }
            let partial = available > 0
            let count: Int
            do { count = try fill() } catch { throw .input(error) }
            if count == 0 { throw .ended(inHead: partial) }
        }
    }
}

/// Where reading a response body has got: what is left of a `Content-Length` body, a chunked body's
/// decoder, or a body that runs until the server closes. A value each response keeps between its reads.
package enum HTTPResponseBody: Sendable {
    /// This many bytes are still to come.
    case remaining(Int64)
    /// A chunked body, decoded so far by this decoder.
    case chunked(ChunkedDecoder)
    /// Everything until the end of the stream.
    case untilClose
    /// The body has been read to its end.
    case done

    /// The body that follows a head with `framing`.
    package init(_ framing: HTTPBodyFraming) {
        switch framing {
        case .none: self = .done
        case .contentLength(let length): self = length == 0 ? .done : .remaining(length)
        case .chunked: self = .chunked(ChunkedDecoder())
        case .untilClose: self = .untilClose
        }
    }

    /// Whether the whole body has been read.
    package var isComplete: Bool {
        if case .done = self { return true }
        return false
    }

    /// Copies the next piece of the body from `input` into `destination` (at most its size) and
    /// returns how many bytes; `nil` once the body is complete. Bytes move with `memcpy` or straight
    /// from the socket, never one at a time.
    package mutating func read<Input: HTTPResponseInput>(
        into destination: UnsafeMutableRawBufferPointer, from input: Input
    ) throws(HTTPResponseReadError<Input.Failure>) -> Int? {
        guard destination.count > 0 else { return isComplete ? nil : 0 }
        while true {
            switch self {
            case .done:
                return nil
            case .remaining(let remaining):
                let wanted = Int(min(Int64(destination.count), remaining))
                let target = UnsafeMutableRawBufferPointer(rebasing: destination[0..<wanted])
                let count: Int
                if input.available > 0 {
                    count = input.take(into: target)
                } else {
                    do { count = try input.receive(into: target) } catch { throw .input(error) }
                    if count == 0 { throw .ended(inHead: false) }
                }
                let left = remaining - Int64(count)
                self = left == 0 ? .done : .remaining(left)
                return count
            case .chunked(var decoder):
                if input.available == 0 {
                    let received: Int
                    do { received = try input.fill() } catch { throw .input(error) }
                    if received == 0 { throw .ended(inHead: false) }
                }
                let outcome: Result<(consumed: Int, copied: Int), ChunkedDecodingError> = input.withUnconsumedBytes { raw in
                    do throws(ChunkedDecodingError) { return .success(try decoder.decode(raw, into: destination)) } catch { return .failure(error) }
                }
                switch outcome {
                case .success(let (consumed, copied)):
                    input.consume(consumed)
                    self = decoder.isComplete ? .done : .chunked(decoder)
                    if copied > 0 { return copied }
                case .failure(let error):
                    throw .malformedChunked(error)
                }
            case .untilClose:
                if input.available > 0 { return input.take(into: destination) }
                let count: Int
                do { count = try input.receive(into: destination) } catch { throw .input(error) }
                if count == 0 {
                    self = .done
                    return nil
                }
                return count
            }
        }
    }
}
