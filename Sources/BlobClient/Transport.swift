import BlobStore
internal import BlobSystem
import Foundation
import HTTP1

/// Sends requests over pooled connections, replaying a replayable request once on a fresh
/// connection when a pooled one turns out to have been closed by the daemon.
///
/// Every method here blocks; callers run them through ``BlockingThreads``.
struct Transport: Sendable {
    let pool: ConnectionPool

    private var timeout: Duration { pool.configuration.requestTimeout }

    /// Sends `request` and reads the response head; the body is left on the returned connection.
    func start(_ request: Request) throws -> (Connection, ResponseReader) {
        var connection = try pool.acquire()
        var retried = false
        while true {
            do {
                try write(request, on: connection)
                let reader = try ResponseReader(connection: connection, method: request.method, timeout: timeout)
                return (connection, reader)
            } catch let error as TransportError {
                connection.close()
                if !retried, connection.isReused, request.isReplayable, error.isStaleConnection {
                    retried = true
                    connection = try pool.fresh()
                    continue
                }
                throw error.publicError
            }
        }
    }

    /// Sends the head of a request whose chunked body the caller streams; replays the head once on a
    /// fresh connection if a pooled one was closed (nothing of the body has been consumed yet).
    func startStreamed(_ request: Request) throws -> Connection {
        var connection = try pool.acquire()
        do {
            try connection.sendRequest(request.serializedHead(contentLength: nil), timeout: timeout)
        } catch {
            connection.close()
            guard connection.isReused, error.isStaleConnection else { throw error.publicError }
            connection = try pool.fresh()
            do { try connection.sendRequest(request.serializedHead(contentLength: nil), timeout: timeout) } catch {
                connection.close()
                throw error.publicError
            }
        }
        return connection
    }

    /// Reads the whole response to a request whose body was already sent on `connection`.
    func finishStreamed(_ connection: Connection, method: HTTPMethod) throws -> FullResponse {
        do {
            var reader = try ResponseReader(connection: connection, method: method, timeout: timeout)
            let bytes = try reader.readAll(from: connection)
            finish(connection, reader: reader)
            return FullResponse(status: reader.response.status.code, headers: reader.response.headers, body: bytes)
        } catch {
            connection.close()
            throw error.publicError
        }
    }

    /// Sends `request` and reads the whole response, returning the connection to the pool.
    func send(_ request: Request) throws -> FullResponse {
        let (connection, reader) = try start(request)
        var body = reader
        do {
            let bytes = try body.readAll(from: connection)
            finish(connection, reader: body)
            return FullResponse(status: reader.response.status.code, headers: reader.response.headers, body: bytes)
        } catch {
            connection.close()
            throw error.publicError
        }
    }

    /// Returns `connection` to the pool if its response was read completely and it may be kept, else closes it.
    func finish(_ connection: Connection, reader: ResponseReader) {
        if reader.isComplete && reader.response.keepAlive && connection.available == 0 {
            pool.release(connection)
        } else {
            connection.close()
        }
    }

    /// Writes the head and a replayable body. If the daemon stops reading (it answered early and
    /// closed), the failure is swallowed so that its response can be read.
    private func write(_ request: Request, on connection: Connection) throws {
        switch request.body {
        case .none, .streamed:
            try connection.sendRequest(request.serializedHead(contentLength: nil), timeout: timeout)
        case .data(let data):
            try connection.sendRequest(request.serializedHead(contentLength: nil), timeout: timeout)
            try answeredEarly(connection) {
                try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in try connection.sendRequest(raw, timeout: timeout) }
            }
        case .file(let path):
            let file: FileDescriptor
            do { file = try FileDescriptor.open(path, .readOnly) } catch {
                throw BlobStoreError.io(operation: "open", path: path, errno: error)
            }
            defer { try? file.close() }
            let size: Int64
            do { size = try file.status().size } catch { throw BlobStoreError.io(operation: "fstat", path: path, errno: error) }
            try connection.sendRequest(request.serializedHead(contentLength: size), timeout: timeout)
            // Read into one buffer and sent from it by address: no per-byte array copies (slow in debug builds).
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
            defer { chunk.deallocate() }
            var remaining = size
            try answeredEarly(connection) {
                while remaining > 0 {
                    let count: Int
                    do {
                        count = try file.read(into: chunk)
                    } catch let error as Errno {
                        throw BlobStoreError.io(operation: "read", path: path, errno: error)
                    }
                    if count == 0 {
                        throw BlobStoreError.io(operation: "read (file shrank while being sent)", path: path, errno: Errno(rawValue: 0))
                    }
                    let used = Int(min(Int64(count), remaining))
                    try connection.sendRequest(UnsafeRawBufferPointer(rebasing: chunk[0..<used]), timeout: timeout)
                    remaining -= Int64(used)
                }
            }
        }
    }

    /// Runs `body`; a broken pipe after the head was accepted means the daemon answered early: the
    /// caller then reads that answer. Stale-connection failures before any response byte stay errors.
    func answeredEarly(_ connection: Connection, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as TransportError {
            guard case .system = error, connection.available > 0 || hasPendingResponse(connection) else { throw error }
        }
    }

    /// Whether response bytes are waiting on a connection whose send failed.
    private func hasPendingResponse(_ connection: Connection) -> Bool {
        (try? connection.fill(timeout: .milliseconds(200), operation: "reading an early response")).map { $0 > 0 } ?? false
    }
}
