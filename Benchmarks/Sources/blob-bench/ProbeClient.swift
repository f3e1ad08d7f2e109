import Glibc

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
    }

    /// The methods the scenarios send.
    enum Method: String {
        case get = "GET", put = "PUT", delete = "DELETE"
    }

    /// A failed exchange: the daemon closed early, answered something unexpected, or a call failed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// A failure described by `description`.
        init(_ description: String) { self.description = description }
    }

    let socket: Socket
    /// Received bytes not consumed yet are `buffer[start..<end]`.
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var closed = false

    /// Connects to `path`. `bufferBytes` bounds how much one receive takes (a response head must fit).
    init(path: String, bufferBytes: Int = 64 * 1024) throws {
        do { socket = try Socket.connect(path: path) } catch { throw Failure("connect \(path): \(error)") }
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
        socket.close()
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

    /// Reads the next final response head (skipping `100 Continue`). Responses to HEAD are not
    /// supported (their `Content-Length` announces no body).
    func readHead() throws -> Head {
        var searched = start
        while true {
            let base = UnsafePointer(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
            let headEnd = ResponseScanner.headEnd(base + start, from: max(0, searched - start - 3), to: end - start)
            if headEnd >= 0 {
                let head: ResponseScanner.Head
                do { head = try ResponseScanner.parse(base + start, length: headEnd) } catch {
                    throw Failure("malformed response head: \(error)")
                }
                start += headEnd
                searched = start
                if head.status < 200 { continue }
                return Head(status: head.status, contentLength: Int64(head.contentLength))
            }
            searched = end
            let moved = start
            try fill()
            searched -= moved - start
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
    func exchange(_ method: Method, _ target: String) throws -> (head: Head, body: [UInt8]) {
        try sendHead(method.rawValue, target)
        let head = try readHead()
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
