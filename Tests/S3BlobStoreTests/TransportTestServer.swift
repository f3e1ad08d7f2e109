import BlobSystem
import Dispatch
import Foundation
import HTTP1
import S3BlobStore

#if canImport(Glibc)
import Glibc
#endif

/// A scripted HTTP/1.1 server on 127.0.0.1 for the transport tests: every accepted connection runs
/// `handler` on a thread of its own, with blocking reads (bounded by a 300 s receive timeout, so a
/// failed test cannot hang the suite).
final class TransportTestServer: @unchecked Sendable {
    /// The listener's endpoint.
    let endpoint: TransportEndpoint
    private let listener: FileDescriptor
    private let state = Locked(State())
    private let threads = DispatchGroup()

    private struct State {
        var accepted = 0
        var sockets: [FileDescriptor] = []
        var stopped = false
    }

    /// How many connections were accepted.
    var acceptedConnections: Int { state.withLock { $0.accepted } }

    init(handler: @escaping @Sendable (TestConnection) throws -> Void) throws {
        listener = try TCPSocket.listen(host: "127.0.0.1")
        endpoint = TransportEndpoint(host: "127.0.0.1", port: try TCPSocket.localAddress(listener).port)
        threads.enter()
        Thread.detachNewThread { [self] in
            defer { threads.leave() }
            while true {
                guard let socket = try? TCPSocket.accept(listener) else { return }
                var limit = timeval(tv_sec: 300, tv_usec: 0)
                setsockopt(socket.rawValue, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                let index: Int? = state.withLock { state in
                    if state.stopped { return nil }
                    state.accepted += 1
                    state.sockets.append(socket)
                    return state.accepted - 1
                }
                guard let index else {
                    try? socket.close()
                    return
                }
                threads.enter()
                Thread.detachNewThread { [self] in
                    defer { threads.leave() }
                    let connection = TestConnection(socket: socket, index: index)
                    try? handler(connection)
                    _ = shutdown(socket.rawValue, Int32(SHUT_RDWR))
                }
            }
        }
    }

    /// Stops accepting, wakes every handler (its socket reads end of stream) and waits for them.
    /// Idempotent.
    func stop() {
        let sockets = state.withLock { state -> [FileDescriptor]? in
            if state.stopped { return nil }
            state.stopped = true
            return state.sockets
        }
        guard let sockets else { return }
        _ = shutdown(listener.rawValue, Int32(SHUT_RDWR))
        for socket in sockets { _ = shutdown(socket.rawValue, Int32(SHUT_RDWR)) }
        threads.wait()
        try? listener.close()
        for socket in sockets { try? socket.close() }
    }
}

/// One request as the test server read it.
struct TestRequest: Sendable {
    let head: HTTPRequestHead
    var target: String { head.target }
}

/// The server's side of one connection, used by one handler thread.
final class TestConnection: @unchecked Sendable {
    let socket: FileDescriptor
    /// 0 for the first connection the server accepted, 1 for the next, …
    let index: Int
    private var buffer: [UInt8] = []
    /// Where receives land; raw memory, since array initialisers run per byte in debug builds.
    private let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)

    init(socket: FileDescriptor, index: Int) {
        self.socket = socket
        self.index = index
    }

    deinit { chunk.deallocate() }

    /// Reads the next request head; `nil` at end of stream (or after 300 s of silence).
    func readHead() -> TestRequest? {
        var parser = HTTPRequestParser()
        while true {
            if !buffer.isEmpty {
                switch parser.parse(buffer) {
                case .complete(let head, let consumed):
                    buffer.removeFirst(consumed)
                    return TestRequest(head: head)
                case .failed:
                    return nil
                case .needMore:
                    break
                }
            }
            guard receiveMore() else { return nil }
        }
    }

    /// Reads a request's whole Content-Length body, feeding it to `consume` piece by piece; returns
    /// the count, or `nil` if the stream ended first.
    func readBody(of request: TestRequest, _ consume: (UnsafeRawBufferPointer) -> Void = { _ in }) -> Int64? {
        guard case .contentLength(let length) = request.head.framing else { return 0 }
        var left = length
        if !buffer.isEmpty {
            let take = Int(min(Int64(buffer.count), left))
            buffer.withUnsafeBytes { consume(UnsafeRawBufferPointer(rebasing: $0[0..<take])) }
            buffer.removeFirst(take)
            left -= Int64(take)
        }
        while left > 0 {
            // Straight from the socket: big bodies never pass through `buffer`.
            let count = recv(socket.rawValue, chunk.baseAddress, chunk.count, 0)
            guard count > 0 else { return nil }
            let take = Int(min(Int64(count), left))
            consume(UnsafeRawBufferPointer(rebasing: chunk[0..<take]))
            if take < count { buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[take..<count])) }
            left -= Int64(take)
        }
        return length
    }

    /// Reads a request and its body (kept whole); `nil` at end of stream.
    func readRequest() -> (TestRequest, [UInt8])? {
        guard let request = readHead() else { return nil }
        var body: [UInt8] = []
        guard readBody(of: request, { body.append(contentsOf: $0) }) != nil else { return nil }
        return (request, body)
    }

    /// Sends raw bytes; false if the peer is gone.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        do {
            try bytes.withUnsafeBytes { try socket.sendAll($0, timeout: .seconds(10)) }
            return true
        } catch { return false }
    }

    /// Sends raw text.
    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Sends a response with a Content-Length body.
    @discardableResult
    func respond(status: String = "200 OK", headers: [String] = [], body: [UInt8] = []) -> Bool {
        var head = "HTTP/1.1 \(status)\r\nContent-Length: \(body.count)\r\n"
        for field in headers { head += field + "\r\n" }
        return write(Array((head + "\r\n").utf8) + body)
    }

    /// Sends a response with a text body.
    @discardableResult
    func respond(status: String = "200 OK", headers: [String] = [], text: String) -> Bool {
        respond(status: status, headers: headers, body: Array(text.utf8))
    }

    /// Blocks until the peer closes (or 300 s of silence pass); returns the bytes that arrived meanwhile.
    func waitForClose() -> Int {
        var count = buffer.count
        buffer.removeAll()
        while receiveMore() {
            count += buffer.count
            buffer.removeAll()
        }
        return count
    }

    /// Closes the connection now.
    func close() {
        _ = shutdown(socket.rawValue, Int32(SHUT_RDWR))
    }

    private func receiveMore() -> Bool {
        let count = recv(socket.rawValue, chunk.baseAddress, chunk.count, 0)
        guard count > 0 else { return false }
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
        return true
    }
}
