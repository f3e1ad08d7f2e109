import BlobSystem
import Glibc
import HTTP1

/// A blocking HTTP/1.1 client connection to the daemon's Unix socket, for the `scale` and `memory`
/// scenarios: one request at a time, responses framed by `Content-Length`.
///
/// Deliberately small and allocation-light (one buffer per connection, bodies read into it and handed
/// to the caller piece by piece), so that a 4 GiB download or a thousand idle connections measure the
/// daemon rather than the client. Blocking: use it from dedicated threads (see ``Workers``), never from
/// the Swift concurrency pool.
final class ProbeClient {
    /// A response head with its body length.
    struct Head {
        var status: Int
        /// `Content-Length` (0 when the response has no body).
        var contentLength: Int64
        var headers: HTTPHeaders
    }

    /// A failed exchange: the daemon closed early, answered something unexpected, or a call failed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// A failure described by `description`.
        init(_ description: String) { self.description = description }
    }

    let socket: FileDescriptor
    /// Received bytes not consumed yet are `buffer[start..<end]`.
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var parser = HTTPResponseParser()
    private var closed = false

    /// Connects to `path`. `bufferBytes` bounds how much one receive takes (a response head must fit).
    init(path: String, bufferBytes: Int = 64 * 1024) throws {
        do { socket = try UnixSocket.connect(path: path) } catch { throw Failure("connect \(path): \(error)") }
        buffer = .allocate(byteCount: max(bufferBytes, 4096), alignment: 4096)
    }

    deinit {
        close()
        buffer.deallocate()
    }

    /// Closes the socket; later calls do nothing.
    func close() {
        guard !closed else { return }
        closed = true
        try? socket.close()
    }

    // MARK: Sending

    /// Sends all of `bytes` (blocking).
    func send(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let sent: Int?
            do { sent = try socket.send(UnsafeRawBufferPointer(rebasing: bytes[offset...])) } catch { throw Failure("send: \(error)") }
            guard let sent, sent > 0 else { throw Failure("send: the socket would block") }
            offset += sent
        }
    }

    /// Sends a request head: `method target`, a `Host`, the `fields` given, and `Content-Length` when `bodyLength` is set.
    func sendHead(_ method: String, _ target: String, bodyLength: Int64? = nil, fields: [(String, String)] = []) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: blobd\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        text += "\r\n"
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBytes { try send(UnsafeRawBufferPointer($0)) }
    }

    // MARK: Receiving

    /// Reads the next final response head (skipping `100 Continue`), answering a request made with `method`.
    func readHead(method: HTTPMethod = .get) throws -> Head {
        while true {
            if start < end {
                switch parser.parse(UnsafeRawBufferPointer(rebasing: buffer[start..<end]), requestMethod: method) {
                case .complete(let response, let consumed):
                    parser.reset()
                    start += consumed
                    if response.isInterim { continue }
                    let length: Int64
                    switch response.framing {
                    case .none: length = 0
                    case .contentLength(let count): length = count
                    case .chunked, .untilClose: throw Failure("unexpected response framing \(response.framing)")
                    }
                    return Head(status: response.status.code, contentLength: length, headers: response.headers)
                case .failed(let error):
                    throw Failure("malformed response: \(error)")
                case .needMore:
                    break
                }
            }
            try fill()
        }
    }

    /// Reads `count` body bytes, handing each piece to `visit` as it arrives; returns the bytes read.
    @discardableResult
    func readBody(_ count: Int64, _ visit: (UnsafeRawBufferPointer) throws -> Void = { _ in }) throws -> Int64 {
        var left = count
        while left > 0 {
            if start == end { try fill() }
            let take = Int(min(Int64(end - start), left))
            try visit(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + take)]))
            start += take
            left -= Int64(take)
        }
        return count
    }

    /// Reads a body of `count` bytes into memory (for small bodies: JSON, a 1 KiB blob).
    func readBodyBytes(_ count: Int64) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(count))
        try readBody(count) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// One request without a body and its whole response (body in memory).
    func exchange(_ method: HTTPMethod, _ target: String) throws -> (head: Head, body: [UInt8]) {
        try sendHead(method.token, target)
        let head = try readHead(method: method)
        return (head, try readBodyBytes(head.contentLength))
    }

    /// Moves unread bytes to the front and receives more (blocking); throws at end of stream.
    private func fill() throws {
        if start == end {
            start = 0
            end = 0
        } else if end == buffer.count {
            guard start > 0 else { throw Failure("a response head does not fit in \(buffer.count) bytes") }
            let count = end - start
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: count)
            start = 0
            end = count
        }
        let received: Int?
        do { received = try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...])) } catch {
            throw Failure("receive: \(error)")
        }
        guard let received else { throw Failure("receive: the socket would block") }
        guard received > 0 else { throw Failure("the daemon closed the connection") }
        end += received
    }
}
