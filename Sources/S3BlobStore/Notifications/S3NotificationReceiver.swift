package import BlobSystem
import Dispatch
import Foundation
internal import HTTP1

/// A small HTTP/1.1 server on a TCP port that a Ceph gateway's topic POSTs bucket notifications
/// to: it answers each `POST` at once (`200` when its records are queued) and hands the records,
/// in the order they arrived, to a handler on a thread of its own, which may block.
///
/// Threads: one accepts; each connection (at most ``S3NotificationReceiverLimits/connectionLimit``)
/// has one, reading with a timeout; one runs the handler. None of them is an event loop or a
/// cooperative-pool thread. A malformed request gets `400` and the receiver carries on; only the
/// connection that sent it may be closed.
///
/// The state shared between threads (the open connections, the queue, the counters) is behind
/// ``Locked``; everything else belongs to the thread that created it.
package final class S3NotificationReceiver: Sendable {
    /// What the receiver has seen, for logs, metrics and tests.
    package struct Counters: Sendable, Hashable {
        /// Requests answered `200`.
        package var accepted = 0
        /// Requests refused (`400`, `405`, `411`, `413`, `503`) and connections turned away.
        package var refused = 0
        /// Records handed to the handler.
        package var delivered = 0
    }

    private struct Queue {
        var events: [S3BucketEvent] = []
        var stopping = false
    }

    /// The address it listens on (with the port the kernel picked for port 0).
    package let address: TCPAddress
    private let listener: FileDescriptor
    private let limits: S3NotificationReceiverLimits
    private let handler: @Sendable (S3BucketEvent) -> Void
    private let connections = Locked<Set<Int32>>([])
    private let queue = Locked(Queue())
    private let queued = DispatchSemaphore(value: 0)
    private let tally = Locked(Counters())
    private let threads = DispatchGroup()

    /// Listens on `host`:`port` (0: any free port; see ``address``) and starts its threads.
    /// `handler` is called with each record, one at a time, in arrival order.
    package init(
        host: String = "127.0.0.1", port: UInt16 = 0, limits: S3NotificationReceiverLimits = S3NotificationReceiverLimits(),
        handler: @escaping @Sendable (S3BucketEvent) -> Void
    ) throws(TCPSocketError) {
        listener = try TCPSocket.listen(host: host, port: port)
        do {
            address = try TCPSocket.localAddress(listener)
        } catch {
            try? listener.close()
            throw error
        }
        self.limits = limits
        self.handler = handler
        start("s3-events-accept") { [self] in acceptLoop() }
        start("s3-events-handler") { [self] in handlerLoop() }
    }

    /// The counters so far.
    package var counters: Counters { tally.withLock { $0 } }

    /// Stops accepting, closes every connection, lets the handler finish the record it is on
    /// (queued records not yet handled are dropped: the gateway was told `200` for them), and
    /// waits up to `timeout` for the threads to end.
    package func stop(timeout: Duration = .seconds(10)) {
        _ = shutdown(listener.rawValue, Int32(SHUT_RDWR))
        connections.withLock { open in
            for fd in open { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
        let wasStopping = queue.withLock { state in
            defer { state.stopping = true }
            return state.stopping
        }
        guard !wasStopping else { return }
        queued.signal()
        let (seconds, attoseconds) = timeout.components
        _ = threads.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        try? listener.close()
    }

    private func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        threads.enter()
        let thread = Thread { [threads] in
            body()
            threads.leave()
        }
        thread.name = name
        thread.start()
    }

    // MARK: Accepting

    private func acceptLoop() {
        while true {
            let socket: FileDescriptor
            do {
                socket = try TCPSocket.accept(listener)
            } catch .system(let error) where error.rawValue == EMFILE || error.rawValue == ENFILE {
                usleep(100_000)
                continue
            } catch {
                return  // shut down (EINVAL) or unusable
            }
            do { try socket.setNonBlocking(true) } catch {
                try? socket.close()
                continue
            }
            let admitted = connections.withLock { open in
                guard open.count < limits.connectionLimit else { return false }
                open.insert(socket.rawValue)
                return true
            }
            guard admitted else {
                tally.withLock { $0.refused += 1 }
                try? socket.sendAll(Self.answer(503, close: true), timeout: .seconds(1))
                try? socket.close()
                continue
            }
            start("s3-events-connection") { [self] in
                serve(socket)
                connections.withLock { open in
                    open.remove(socket.rawValue)
                    // Closed under the lock, so `stop` never shuts down a number reused by another open.
                    try? socket.close()
                }
            }
        }
    }

    // MARK: One connection

    private enum Outcome {
        case keepGoing
        case close
    }

    private func serve(_ socket: FileDescriptor) {
        var parser = HTTPRequestParser(limits: HTTPHeadLimits(maxStartLineLength: 4096, maxHeadSize: 16 * 1024, maxHeaderCount: 64), requiresHost: false)
        var buffer: [UInt8] = []
        while true {
            switch parser.parse(buffer) {
            case .needMore:
                guard receive(socket, into: &buffer) else { return }
            case .failed(let error):
                refuse(socket, error.statusCode, close: true)
                return
            case .complete(let head, let consumed):
                buffer.removeFirst(consumed)
                guard case .keepGoing = handle(head, socket, &buffer) else { return }
            }
        }
    }

    /// Reads more bytes onto `buffer`; `false` at end of stream, on timeout or on error.
    private func receive(_ socket: FileDescriptor, into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { raw in (try? socket.receive(into: raw, timeout: limits.readTimeout)) ?? 0 }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    private func handle(_ head: HTTPRequestHead, _ socket: FileDescriptor, _ buffer: inout [UInt8]) -> Outcome {
        let length: Int
        switch head.framing {
        case .none:
            length = 0
        case .contentLength(let declared):
            guard declared <= Int64(limits.bodyByteLimit) else {
                refuse(socket, 413, close: true)
                return .close
            }
            length = Int(declared)
        case .chunked, .untilClose:
            refuse(socket, 411, close: true)
            return .close
        }
        if head.expectsContinue {
            guard (try? socket.sendAll(Self.continueLine, timeout: limits.readTimeout)) != nil else { return .close }
        }
        while buffer.count < length {
            guard receive(socket, into: &buffer) else { return .close }
        }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        guard head.method == .post else {
            refuse(socket, 405, close: !head.keepAlive)
            return head.keepAlive ? .keepGoing : .close
        }
        let records: [S3BucketEvent]
        do {
            records = try S3BucketEvent.records(in: body)
        } catch {
            refuse(socket, 400, close: !head.keepAlive)
            return head.keepAlive ? .keepGoing : .close
        }
        let queuedAll = queue.withLock { state in
            guard !state.stopping, state.events.count + records.count <= limits.queueLimit else { return false }
            state.events.append(contentsOf: records)
            return true
        }
        guard queuedAll else {
            refuse(socket, 503, close: !head.keepAlive)
            return head.keepAlive ? .keepGoing : .close
        }
        queued.signal()
        tally.withLock { $0.accepted += 1 }
        guard (try? socket.sendAll(Self.answer(200, close: !head.keepAlive), timeout: limits.readTimeout)) != nil else { return .close }
        return head.keepAlive ? .keepGoing : .close
    }

    private func refuse(_ socket: FileDescriptor, _ status: Int, close: Bool) {
        tally.withLock { $0.refused += 1 }
        try? socket.sendAll(Self.answer(status, close: close), timeout: limits.readTimeout)
    }

    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static func answer(_ status: Int, close: Bool) -> [UInt8] {
        let reason = HTTPStatus(code: status).reasonPhrase
        return Array("HTTP/1.1 \(status) \(reason)\r\nContent-Length: 0\r\n\(close ? "Connection: close\r\n" : "")\r\n".utf8)
    }

    // MARK: The handler's thread

    private func handlerLoop() {
        while true {
            queued.wait()
            let (events, stopping) = queue.withLock { state in
                defer { state.events.removeAll() }
                return (state.events, state.stopping)
            }
            if stopping { return }
            for event in events {
                if queue.withLock({ $0.stopping }) { return }
                handler(event)
                tally.withLock { $0.delivered += 1 }
            }
        }
    }
}

extension FileDescriptor {
    fileprivate func sendAll(_ bytes: [UInt8], timeout: Duration) throws(TCPSocketError) {
        let result: Result<Void, TCPSocketError> = bytes.withUnsafeBytes { raw in
            do throws(TCPSocketError) {
                try sendAll(raw, timeout: timeout)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}
