import BlobProtocol
import BlobStore
import BlobSystem
import CBlobShim
import Foundation
import HTTP1

/// One event-loop thread: an edge-triggered epoll over its connections, a table of connection
/// state indexed by descriptor, and an inbox (woken by an eventfd) through which other threads
/// hand it new connections and finished store work.
///
/// The loop only parses, serializes and moves bytes (`sendfile` for file bodies). Every store call
/// runs on a blocking-work thread (``WorkPools``) and reports back through the inbox; the one
/// store call made here is ``BlobStore/ServedBackend/openIfReady(_:)``, which never waits.
///
/// Everything except ``post(_:)`` runs on the loop's own thread, which is why the class is
/// `@unchecked Sendable`: the inbox is the only state shared between threads and it is `Locked`.
final class EventLoop: @unchecked Sendable {
    typealias Work = @Sendable (EventLoop) -> Void

    let index: Int
    private let epoll: Epoll
    private let wakeup: EventSignal
    private let router: Router
    /// Where store work goes.
    private let pools: WorkPools
    /// Whether a store's small puts share a job (``UploadLane``): the pools allow it and the backend's
    /// commits do not wait for another service.
    private let smallPutsShareAJob: Bool
    /// The loop's thread, once it runs (for ``assertOnLoop()``).
    private var thread: pthread_t?
    private let log: Log
    private let inbox = Locked<[Work]>([])
    /// The inbox's other buffer: swapped with it to take its work (so neither is reallocated).
    private var takenWork: [Work] = []
    /// Small puts' lanes, by store (see ``UploadLane``), and those given jobs in the current wake-up.
    private var uploadLanes: [String: UploadLane] = [:]
    private var lanesWithReadyJobs: [UploadLane] = []
    /// Lanes kept before idle ones are forgotten.
    private static let keptLanes = 256
    private var connections: [Connection?] = []
    private var liveCount = 0
    private var nextSerial: UInt64 = 0
    private var draining = false
    private var drainDeadline = Date.distantFuture
    private var running = true
    /// Payload ranges reported by the chunked decoder; reused.
    private var payloadRanges: [Range<Int>] = []
    private let limits = HTTPHeadLimits(maxStartLineLength: 8 * 1024, maxHeadSize: 32 * 1024, maxHeaderCount: 100)
    private let finished = Locked(false)
    private static let wakeToken = UInt64.max
    private static let interest: Epoll.Events = [.readable, .writable, .peerClosed, .edgeTriggered]
    /// Event bits that mean bytes (or the end of them) may be waiting to be read.
    private static let inputEvents: Epoll.Events = [.readable, .peerClosed, .hangUp, .error]
    /// Event bits after which the socket will never raise another input edge.
    private static let endOfInput: Epoll.Events = [.peerClosed, .hangUp, .error]
    private static let sendFileChunk = 1 << 20
    /// How far past a file body's next `sendfile` one hop to a work thread checks its content: the
    /// page cache keeps what was just read for the `sendfile`s that follow, and a large body costs
    /// one hop per this many bytes.
    private static let checkAheadBytes: Int64 = 8 << 20
    /// File bodies larger than this get a larger socket send buffer (``largeBodySendBuffer``).
    static let largeBody: Int64 = 256 << 10
    /// The send buffer asked for when a large body is about to go out. With the default (208 KiB,
    /// `net.core.wmem_default`), a 1 MiB body leaves in about 8 `sendfile`s, each followed by an
    /// `EPOLLOUT` wake-up once the client has read; a buffer the size of the body (which Linux
    /// doubles, up to twice `net.core.wmem_max`) lets most of it go in one. Asked only for large
    /// bodies: the buffer is a limit, and a client that stops reading holds that much kernel memory.
    static let largeBodySendBuffer: Int32 = 1 << 20
    /// Lingering close: after answering a request whose body is still arriving (a refused upload,
    /// an error answered before the body was read) with a closing response, the loop half-closes
    /// its side, then reads and discards at most this many more bytes, for at most
    /// ``lingerSeconds``, before closing. A client that writes its whole body before reading (most
    /// HTTP libraries unless they send `Expect: 100-continue`) would otherwise fail with `EPIPE` and
    /// never read the answer; the bounds keep a client from holding the daemon busy for long.
    static let lingerByteLimit = 64 << 20
    static let lingerSeconds = 5.0
    /// Connections in state `lingering` and when each must close, in deadline order (every
    /// connection lingers equally long). Entries of connections closed since are skipped.
    private var lingering: [(fd: Int32, serial: UInt64, deadline: DispatchTime)] = []
    private var lingerHead = 0
    /// An event stream takes frames from the log only once the socket has taken everything before,
    /// and then about this many bytes: what a slow reader costs the daemon beyond the shared log.
    private static let eventBatchBytes = 64 << 10
    /// Connections in state `streaming` (they get heartbeats).
    private var streamingCount = 0
    /// This loop's `Date` header line, formatted once a second.
    private var dateLine = DateHeaderLine()
    private var nextHeartbeat = DispatchTime.now()
    private let heartbeatInterval: Double
    /// This loop's access-log line builder; `nil` when the access log is off.
    private var accessLog: AccessLogWriter?

    init(index: Int, router: Router, pools: WorkPools, log: Log, heartbeatInterval: Double = 15, accessLog: AccessLog? = nil) throws {
        self.index = index
        self.pools = pools
        self.accessLog = accessLog.map(AccessLogWriter.init(sink:))
        self.heartbeatInterval = max(0.01, heartbeatInterval)
        self.router = router
        self.log = log
        smallPutsShareAJob = pools.smallPutsShareAJob && !router.stores.catalog.commitsWaitForAnotherService
        epoll = try Epoll()
        wakeup = try EventSignal()
        try epoll.add(wakeup.descriptor, events: [.readable, .edgeTriggered], token: EventLoop.wakeToken)
    }

    // MARK: Cross-thread entry points

    /// Runs `work` on the loop thread soon. Safe from any thread.
    ///
    /// Only the post that finds the inbox empty signals the loop: a non-empty inbox has a signal on
    /// its way already, and the loop takes the whole inbox after consuming the signal, so work that
    /// arrives in a burst (the completions of one group commit) costs one wake-up.
    func post(_ work: @escaping Work) {
        let first = inbox.withLock { inbox in
            inbox.append(work)
            return inbox.count == 1
        }
        if first { wakeup.signal() }
    }

    /// Hands a freshly accepted (non-blocking) socket to this loop; a `refused` peer's first
    /// request is answered with 403 and the connection closed. `peer` is for the access log.
    func adopt(_ socket: FileDescriptor, refused: Bool = false, peer: PeerCredentials? = nil) {
        post { loop in loop.register(socket, refused: refused, peer: peer) }
    }

    /// Asks the loop to stop: idle connections close now, busy ones after their current response,
    /// and whatever remains at `deadline` is closed.
    func drain(until deadline: Date) {
        post { loop in
            loop.draining = true
            loop.drainDeadline = deadline
            for case let connection? in loop.connections {
                connection.keepAlive = false
                // An event stream never finishes by itself, and a lingering connection has had its answer: end them now.
                if connection.isIdle || connection.state == .streaming || connection.state == .lingering { loop.close(connection) }
            }
        }
    }

    /// Whether the loop thread has returned.
    var hasFinished: Bool { finished.withLock { $0 } }

    // MARK: The loop

    /// Starts the loop's thread.
    func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "blobd-loop-\(index)"
        thread.start()
    }

    /// Checks (in debug builds) that the caller is this loop's thread: connection state is touched nowhere else.
    private func assertOnLoop() {
        assert(thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false, "loop \(index) state touched off its thread")
    }

    private func run() {
        thread = pthread_self()
        var events = [Epoll.Event](repeating: Epoll.Event(), count: 256)
        while running {
            var timeout: Int32 = draining ? 50 : streamingCount > 0 ? Int32(heartbeatInterval * 1000) : -1
            if lingerHead < lingering.count {
                let now = DispatchTime.now().uptimeNanoseconds, deadline = lingering[lingerHead].deadline.uptimeNanoseconds
                let wait = Int32(clamping: deadline > now ? (deadline - now) / 1_000_000 + 1 : 0)
                timeout = timeout < 0 ? wait : min(timeout, wait)
            }
            let count: Int
            do { count = try epoll.wait(into: &events, timeoutMilliseconds: timeout) } catch {
                log(.error, "loop \(index): epoll_wait failed: \(error)")
                break
            }
            for i in 0..<count {
                let token = events[i].data
                if token == EventLoop.wakeToken {
                    wakeup.drain()
                    runInbox()
                } else if Int(token) < connections.count, let connection = connections[Int(token)] {
                    let ready = Epoll.Events(rawValue: events[i].events)
                    // Only input events can bring bytes: a writable edge alone (a large response
                    // draining) must not cost a `recv` that says EAGAIN.
                    if !ready.isDisjoint(with: EventLoop.inputEvents) { connection.mayHaveInput = true }
                    if !ready.isDisjoint(with: EventLoop.endOfInput) { connection.hangUpSeen = true }
                    drive(connection)
                }
            }
            // The small puts this wake-up made ready, one batch per store.
            if !lanesWithReadyJobs.isEmpty { dispatchReadyUploads() }
            // The access-log lines of everything this wake-up answered, in one write.
            if accessLog?.hasPending == true { accessLog!.flush() }
            if streamingCount > 0, DispatchTime.now() >= nextHeartbeat { sendHeartbeats() }
            if lingerHead < lingering.count { endExpiredLingering() }
            if draining && (liveCount == 0 || Date() >= drainDeadline) { running = false }
        }
        runInbox()
        for case let connection? in connections { close(connection) }
        // A lane refers to its loop: forgetting the lanes ends that cycle, so a stopped loop is freed
        // (a job still draining a lane keeps it only until it finishes).
        uploadLanes.removeAll()
        accessLog?.flush()
        try? wakeup.descriptor.close()
        try? epoll.descriptor.close()
        finished.withLock { $0 = true }
    }

    private func runInbox() {
        inbox.withLock { swap(&$0, &takenWork) }
        for item in takenWork { item(self) }
        takenWork.removeAll(keepingCapacity: true)
    }

    private func register(_ socket: FileDescriptor, refused: Bool, peer: PeerCredentials?) {
        let slot = Int(socket.rawValue)
        if draining {
            try? socket.close()
            return
        }
        nextSerial &+= 1
        let connection = Connection(socket: socket, serial: nextSerial, limits: limits)
        connection.refused = refused
        connection.peer = peer
        router.metrics.connectionOpened()
        if refused { router.metrics.connectionRefused() }
        if slot >= connections.count { connections.append(contentsOf: repeatElement(nil, count: slot + 1 - connections.count)) }
        connections[slot] = connection
        liveCount += 1
        do { try epoll.add(socket, events: EventLoop.interest, token: UInt64(slot)) } catch {
            log(.error, "loop \(index): cannot watch a connection: \(error)")
            close(connection)
            return
        }
        // Registration reports readiness that already exists, but driving now saves a wake-up.
        drive(connection)
    }

    private func close(_ connection: Connection) {
        guard !connection.closed else { return }
        connection.closed = true
        release(connection)
        router.metrics.connectionClosed()
        if let subscription = connection.subscription {
            router.events.unsubscribe(subscription)
            connection.subscription = nil
            streamingCount -= 1
        }
        try? epoll.remove(connection.socket)
        try? connection.socket.close()
        connections[Int(connection.socket.rawValue)] = nil
        liveCount -= 1
    }

    // MARK: Driving a connection

    /// Makes all the progress possible without blocking on the network. Edge-triggered epoll
    /// only reports changes, so this returns only when the connection waits on `EAGAIN` (read or
    /// write), on store work, or is closed.
    private func drive(_ c: Connection) {
        assertOnLoop()
        while !c.closed {
            if c.hasPendingOutput {
                guard flush(c) else { return }
            }
            if c.responseQueued {
                finishResponse(c)
                continue
            }
            if c.state == .waiting { return }
            if c.state == .lingering {
                guard linger(c) else { return }
                continue
            }
            if c.state == .streaming {
                // Everything written so far is out: take the next frames (paced by the client's reading).
                if let subscription = c.subscription {
                    switch subscription.take(into: &c.out, limit: EventLoop.eventBatchBytes) {
                    case .frames: continue
                    case .nothing: break
                    case .dropped:
                        log(.info, "fd \(c.socket.rawValue): event subscriber too slow, dropped")
                        close(c)
                        return
                    }
                }
                // Nothing more is expected from an event-stream client; reading notices when it leaves.
                do {
                    guard let n = try c.socket.receive(into: c.buffer) else { return }
                    if n == 0 { close(c) }
                } catch {
                    close(c)
                }
                continue
            }
            if process(c) { continue }
            // An upload with a full stage reads on once its job has taken the bytes (`uploadStepped`).
            if c.state == .body, c.body?.feedsUpload == true, c.upload?.isFull == true { return }
            if c.inputClosed {
                // Nothing more will come: a half-read request can never complete.
                close(c)
                return
            }
            if c.end == Connection.bufferCapacity { c.compact() }
            if c.end == Connection.bufferCapacity {
                // Only a head can fill the buffer without being consumed, and the parser's limit is below it.
                c.bodyPending = true
                // Not a parsed request: the access log must not name the previous one.
                c.requestStarted = DispatchTime.now().uptimeNanoseconds
                c.requestMethod = nil
                c.requestTarget = nil
                queue(APIError(.badRequest, status: .requestHeaderFieldsTooLarge, "the request head is too large").response(close: true), to: c)
                continue
            }
            guard c.mayHaveInput else { return }
            let space = UnsafeMutableRawBufferPointer(rebasing: c.buffer[c.end...])
            do {
                guard let n = try c.socket.receive(into: space) else {
                    c.mayHaveInput = false
                    return
                }
                if n == 0 { c.inputClosed = true } else { c.end += n }
                if n < space.count && !c.hangUpSeen { c.mayHaveInput = false }
            } catch {
                close(c)
                return
            }
        }
    }

    /// Writes pending output; `true` when all of it is out, `false` when the socket would block or failed.
    private func flush(_ c: Connection) -> Bool {
        while c.outOffset < c.out.count {
            let result = c.out.withUnsafeBytes { raw in
                Result { () throws(Errno) in try c.socket.send(UnsafeRawBufferPointer(rebasing: raw[c.outOffset...])) }
            }
            switch result {
            case .success(let sent?): c.outOffset += sent
            case .success(nil): return false
            case .failure:
                close(c)
                return false
            }
        }
        c.out.removeAll(keepingCapacity: true)
        c.outOffset = 0
        while var file = c.file {
            if file.count == 0 {
                file.handle.close()
                c.file = nil
                break
            }
            do {
                let chunk = Int(min(file.count, Int64(EventLoop.sendFileChunk)))
                // Hashed before it leaves; the part that ends the body only once the whole blob has
                // passed, so a damaged blob's body ends short and the connection closes. The hashing
                // reads the file, which may wait for the disk: it runs on a work thread, a window
                // ahead of the sending, which goes on meanwhile through what has already passed.
                // While a check runs it holds the handle's lock through its reads: not even asked then.
                let chunkEnd = file.offset + Int64(chunk)
                let isLast = Int64(chunk) == file.count
                if !c.contentCheckRunning {
                    c.contentCheckedThrough = file.handle.contentCheckedThrough()
                    if c.contentCheckedThrough != Int64.max && c.contentCheckedThrough - chunkEnd < EventLoop.checkAheadBytes / 2 {
                        checkAhead(c, file)
                    }
                }
                guard c.contentCheckedThrough == Int64.max || (!isLast && chunkEnd <= c.contentCheckedThrough) else {
                    return false  // resumed when the check reports back
                }
                guard let sent = try c.socket.sendFile(from: file.handle.fileDescriptor, offset: &file.offset, count: chunk) else {
                    c.file = file
                    return false
                }
                if sent == 0 { throw Errno(rawValue: EIO) }  // the file is shorter than its header says
                file.count -= Int64(sent)
                c.file = file
            } catch {
                log(.error, "file body ended short: \(error)")
                close(c)
                return false
            }
        }
        return true
    }

    /// Has a work thread read and hash the file body's next window of content (up to
    /// ``checkAheadBytes`` past what has passed or is being sent, and the whole content once that
    /// reaches the body's last byte), then resume the connection. While it runs the work thread
    /// owns the open file: a connection closed meanwhile leaves it to the check's completion to
    /// close (see ``release(_:)``).
    private func checkAhead(_ c: Connection, _ file: Response.FileBody) {
        c.contentCheckRunning = true
        let handle = file.handle
        let bodyEnd = file.offset + file.count
        let through = min(bodyEnd, max(c.contentCheckedThrough, file.offset) + EventLoop.checkAheadBytes)
        let fd = c.socket.rawValue, serial = c.serial
        pools.quick.submit {
            let failure: (any Error)?
            do {
                try handle.checkContent(throughFileOffset: through, isLast: through == bodyEnd)
                failure = nil
            } catch {
                failure = error
            }
            self.post { loop in loop.contentChecked(fd: fd, serial: serial, handle: handle, failure: failure) }
        }
    }

    /// A file body's check (``checkAhead(_:_:)``) finished: send on, or end the body short.
    private func contentChecked(fd: Int32, serial: UInt64, handle: BlobReadHandle, failure: (any Error)?) {
        assertOnLoop()
        guard Int(fd) < connections.count, let c = connections[Int(fd)], c.serial == serial, c.contentCheckRunning,
            c.file?.handle === handle
        else {
            handle.close()  // the connection went while the check ran, and left the file to it
            return
        }
        c.contentCheckRunning = false
        if let failure {
            log(.error, "file body ended short: \(failure)")
            close(c)
            return
        }
        drive(c)
    }

    /// The current response is fully written: close (lingering first if a body is still arriving)
    /// or get ready for the next request.
    private func finishResponse(_ c: Connection) {
        c.responseQueued = false
        if c.closeAfterResponse || draining {
            if c.bodyPending && !c.inputClosed && !draining { startLingering(c) } else { close(c) }
        } else {
            c.state = .head
        }
    }

    // MARK: Lingering close

    /// Half-closes the connection (the client reads the answer, then end of stream) and starts
    /// discarding what the client still sends.
    private func startLingering(_ c: Connection) {
        _ = shutdown(c.socket.rawValue, Int32(SHUT_WR))
        c.state = .lingering
        c.start = 0
        c.end = 0
        c.lingered = 0
        lingering.append((c.socket.rawValue, c.serial, DispatchTime.now() + EventLoop.lingerSeconds))
    }

    /// Reads and drops input; `true` if it made progress (call again), `false` when it waits or closed.
    private func linger(_ c: Connection) -> Bool {
        if c.inputClosed {
            close(c)
            return false
        }
        guard c.mayHaveInput else { return false }
        do {
            guard let n = try c.socket.receive(into: c.buffer) else {
                c.mayHaveInput = false
                return false
            }
            c.lingered += n
            if n == 0 || c.lingered >= EventLoop.lingerByteLimit {
                if n > 0 { log(.info, "fd \(c.socket.rawValue): closing after discarding \(c.lingered) bytes of a refused body") }
                close(c)
                return false
            }
            if n < c.buffer.count && !c.hangUpSeen { c.mayHaveInput = false }
            return true
        } catch {
            close(c)
            return false
        }
    }

    /// Closes the lingering connections whose time is up.
    private func endExpiredLingering() {
        let now = DispatchTime.now()
        while lingerHead < lingering.count, lingering[lingerHead].deadline <= now {
            let (fd, serial, _) = lingering[lingerHead]
            lingerHead += 1
            if Int(fd) < connections.count, let c = connections[Int(fd)], c.serial == serial, c.state == .lingering { close(c) }
        }
        if lingerHead == lingering.count {
            lingering.removeAll(keepingCapacity: true)
            lingerHead = 0
        } else if lingerHead > 1024 {
            lingering.removeFirst(lingerHead)
            lingerHead = 0
        }
    }

    /// Serializes `response` for writing; the request ends when it is written.
    private func queue(_ response: Response, to c: Connection) {
        var response = response
        if c.requestIsHead { response.omitBody = true }
        recordMetrics(c, status: Int(response.status.code), bytesOut: response.omitBody ? 0 : (response.file?.count ?? Int64(response.inMemoryCount)))
        let closing = response.closeConnection || !c.keepAlive || draining
        release(c)
        response.serialize(version: c.version, close: closing, dateLine: dateLine.current(), into: &c.out)
        c.file = response.omitBody ? nil : response.file
        if response.omitBody { response.file?.handle.close() }
        if let file = c.file, file.count > EventLoop.largeBody, !c.sendBufferRaised {
            c.sendBufferRaised = true
            try? c.socket.setSendBufferSize(EventLoop.largeBodySendBuffer)  // only an optimisation
        }
        c.closeAfterResponse = closing
        c.responseQueued = true
        c.state = .waiting
    }

    /// Consumes buffered input; `true` if anything changed.
    private func process(_ c: Connection) -> Bool {
        switch c.state {
        case .waiting, .streaming, .lingering:
            return false
        case .head:
            guard c.start < c.end else { return false }
            let result = c.parser.parse(UnsafeRawBufferPointer(rebasing: c.buffer[c.start..<c.end]))
            switch result {
            case .needMore:
                return false
            case .failed(let error):
                c.requestIsHead = false
                c.requestStarted = DispatchTime.now().uptimeNanoseconds
                c.operation = .other
                c.bodyBytes = 0
                c.requestMethod = nil
                c.requestTarget = nil
                // Where the request ends is unknown: whatever follows is discarded while lingering.
                c.bodyPending = true
                log(.info, "malformed request: \(error)")
                queue(APIError(.badRequest, status: error.status, "malformed request: \(error.code)").response(close: true), to: c)
                return true
            case .complete(let head, let consumed):
                c.start += consumed
                if c.start == c.end { c.start = 0; c.end = 0 }
                handle(head, on: c)
                return true
            }
        case .body:
            return readBody(c)
        }
    }

    private func handle(_ head: HTTPRequestHead, on c: Connection) {
        c.version = head.version
        c.keepAlive = head.keepAlive && !draining
        c.requestIsHead = head.method == .head
        let hasBody = head.framing != .none && head.framing != .contentLength(0)
        c.bodyPending = hasBody
        c.requestStarted = DispatchTime.now().uptimeNanoseconds
        if accessLog != nil {
            c.requestMethod = head.method
            c.requestTarget = head.targetBytes
        }
        if c.refused {
            queue(APIError(.forbidden, "this daemon does not serve your user or group").response(close: true), to: c)
            return
        }
        c.bodyBytes = 0
        let (action, operation) = router.action(for: head)
        c.operation = operation
        switch action {
        case .respond(let response):
            if !hasBody {
                queue(response, to: c)
            } else if head.expectsContinue || Self.declaredLength(head) > Int64(EventLoop.lingerByteLimit) {
                // The client waits for our word before sending the body, or the body is too large to
                // read before answering: answer now and close (lingering, in case it is sending).
                var closing = response
                closing.closeConnection = true
                queue(closing, to: c)
            } else {
                startBody(head, on: c, reader: Connection.BodyReader(discardResponse: response, remaining: 0))
            }
        case .upload(let start):
            let feed = UploadFeed(start: start, declaredLength: Self.declaredLength(head))
            // `100 Continue` only once the store has accepted the upload (see `uploadStepped`).
            feed.continueOwed = hasBody && head.expectsContinue
            c.upload = feed
            startBody(head, on: c, reader: Connection.BodyReader(feedsUpload: true, remaining: 0))
        case .events(let store, let lastEventID):
            startEventStream(c, store: store, after: lastEventID, discardBody: hasBody)
        case .offload(let lane, let work):
            // No route that answers later takes a body; one that arrives anyway ends the connection.
            if hasBody { c.keepAlive = false }
            c.state = .waiting
            let fd = c.socket.rawValue, serial = c.serial
            pools.pool(for: lane).run(work) { response in
                self.post { loop in loop.complete(fd: fd, serial: serial, response: response) }
            }
        case .offloadBlocking(let lane, let work):
            if hasBody { c.keepAlive = false }
            c.state = .waiting
            let fd = c.socket.rawValue, serial = c.serial
            pools.pool(for: lane).submit {
                let response = work()
                self.post { loop in loop.complete(fd: fd, serial: serial, response: response) }
            }
        }
    }

    /// The `Content-Length` of a request, 0 when it has none.
    private static func declaredLength(_ head: HTTPRequestHead) -> Int64 {
        if case .contentLength(let length) = head.framing { return length }
        return 0
    }

    private func startBody(_ head: HTTPRequestHead, on c: Connection, reader: Connection.BodyReader) {
        var reader = reader
        switch head.framing {
        case .chunked: reader.chunked = ChunkedDecoder()
        case .contentLength(let length): reader.remaining = length
        case .none, .untilClose: reader.remaining = 0
        }
        c.body = reader
        c.state = .body
        if reader.chunked == nil && reader.remaining == 0 {
            bodyFinished(c)
        } else if c.start == c.end {
            // No body bytes yet: open the upload while they travel.
            pumpUpload(c)
        }
    }

    /// Stages buffered body bytes for the upload (or discards them); `true` if anything changed.
    private func readBody(_ c: Connection) -> Bool {
        guard var reader = c.body, c.start < c.end else { return false }
        let feed = reader.feedsUpload ? c.upload : nil
        if let feed, feed.isFull { return false }
        let available = UnsafeRawBufferPointer(rebasing: c.buffer[c.start..<c.end])
        if var decoder = reader.chunked {
            payloadRanges.removeAll(keepingCapacity: true)
            let consumed: Int
            do { consumed = try decoder.decode(available, payload: &payloadRanges) } catch {
                queue(APIError(.badRequest, status: HTTPStatus(code: error.statusCode), "malformed chunked body: \(error.code)").response(close: true), to: c)
                return true
            }
            for range in payloadRanges {
                feed?.staged.append(contentsOf: UnsafeRawBufferPointer(rebasing: available[range]))
                c.bodyBytes += Int64(range.count)
            }
            c.start += consumed
            reader.chunked = decoder
            c.body = reader
            if decoder.isComplete {
                bodyFinished(c)
            } else if feed == nil, var answer = reader.discardResponse, c.bodyBytes > Int64(EventLoop.lingerByteLimit) {
                // A refused request's chunked body goes on too long to read before answering.
                answer.closeConnection = true
                queue(answer, to: c)
            }
        } else {
            let take = Int(min(Int64(available.count), reader.remaining))
            feed?.staged.append(contentsOf: UnsafeRawBufferPointer(rebasing: available[..<take]))
            c.bodyBytes += Int64(take)
            c.start += take
            reader.remaining -= Int64(take)
            c.body = reader
            if reader.remaining == 0 { bodyFinished(c) }
        }
        if c.start == c.end { c.start = 0; c.end = 0 }
        if c.upload === feed { pumpUpload(c) }
        return true
    }

    private func bodyFinished(_ c: Connection) {
        guard let reader = c.body else { return }
        c.body = nil
        c.bodyPending = false
        if reader.feedsUpload, let feed = c.upload {
            c.state = .waiting
            feed.bodyComplete = true
            pumpUpload(c)
        } else {
            queue(reader.discardResponse ?? Response(status: .noContent), to: c)
        }
    }

    // MARK: Uploads

    /// Hands what the connection's upload has staged to a blocking-work job, unless one is running
    /// (its completion calls this again): opens the upload first, appends, and commits once the
    /// whole body is in. A small PUT whose body came with its head takes one job, run in its store's
    /// lane (``UploadLane``) with the others this wake-up made ready, unless the pools say small puts
    /// do not share a job (``WorkPools/smallPutsShareAJob``) or the backend's commits wait for
    /// another service (``ServedBackendCatalog/commitsWaitForAnotherService``, which a shared job
    /// would make one after another); other jobs run on their own.
    private func pumpUpload(_ c: Connection) {
        assertOnLoop()
        guard let feed = c.upload, !feed.jobRunning else { return }
        let opened = feed.opened
        guard opened == nil || !feed.staged.isEmpty || feed.bodyComplete else { return }
        let job = UploadJob(feed: feed, fd: c.socket.rawValue, start: feed.start, opened: opened, bytes: feed.staged, commit: feed.bodyComplete)
        feed.staged = []
        feed.jobRunning = true
        if smallPutsShareAJob && opened == nil && job.commit && job.bytes.count <= UploadLane.smallBody {
            let lane = uploadLane(for: job.start.store)
            if lane.ready.isEmpty { lanesWithReadyJobs.append(lane) }
            lane.add(job)
        } else {
            let pool = pools.quick, reports = UploadReports(loop: self)
            pool.submit {
                reports.run(job, pool: pool)
                reports.deliver()
            }
        }
    }

    /// The lane of `store`'s small puts, made on first use.
    private func uploadLane(for store: String) -> UploadLane {
        if let lane = uploadLanes[store] { return lane }
        if uploadLanes.count >= EventLoop.keptLanes {
            // Stores come and go: forget the lanes that hold nothing (a later put makes a new one).
            uploadLanes = uploadLanes.filter { !$0.value.isIdle }
        }
        let lane = UploadLane(loop: self, pool: pools.quick)
        uploadLanes[store] = lane
        return lane
    }

    /// Hands each lane the small puts this wake-up made ready.
    private func dispatchReadyUploads() {
        for lane in lanesWithReadyJobs { lane.dispatch() }
        lanesWithReadyJobs.removeAll(keepingCapacity: true)
    }

    /// Small puts of `store` queued in this loop's lane and not yet taken by its job. For tests;
    /// safe from any thread but the loop's (it waits for the loop to answer).
    func queuedSmallPuts(store: String) -> Int {
        let answer = Locked(0)
        let answered = DispatchSemaphore(value: 0)
        post { loop in
            answer.withLock { $0 = loop.uploadLanes[store]?.queuedCount ?? 0 }
            answered.signal()
        }
        answered.wait()
        return answer.withLock { $0 }
    }

    /// An upload job finished: go on with the body, or answer.
    func uploadStepped(_ feed: UploadFeed, fd: Int32, step: UploadStep) {
        guard Int(fd) < connections.count, let c = connections[Int(fd)], c.upload === feed else {
            // The request ended meanwhile (the client left, or an error was answered): let go of the upload.
            if case .fed(let opened) = step { pools.quick.submit { opened.abandon() } }
            return
        }
        feed.jobRunning = false
        if feed.continueOwed, !step.isRefusal {
            // The upload began (in this job): the client gets its word, before whatever follows.
            feed.continueOwed = false
            HTTPSerializer.appendStatusLine(.continue, version: c.version, into: &c.out)
            HTTPSerializer.appendEndOfHead(into: &c.out)
        }
        switch step {
        case .fed(let opened):
            feed.opened = opened
            pumpUpload(c)
        case .refused(let error):
            c.upload = nil
            var response = Router.errorResponse(error)
            if c.body == nil {
                queue(response, to: c)  // the whole body is in
            } else if feed.continueOwed || feed.declaredLength > Int64(EventLoop.lingerByteLimit) {
                // The client waits for our word before sending the body, or the body is too large to
                // read before answering: answer now and close (lingering, in case it is sending).
                response.closeConnection = true
                queue(response, to: c)
            } else {
                c.body?.feedsUpload = false
                c.body?.discardResponse = response
            }
        case .failed(let error):
            // The upload cancelled itself; the rest of the body is not read, so the connection closes.
            c.upload = nil
            var response = Router.errorResponse(error)
            response.closeConnection = true
            queue(response, to: c)
        case .finished(let response):
            c.upload = nil
            queue(response, to: c)
        }
        drive(c)
    }

    /// Drops what the connection holds for its current request; an upload is abandoned off the
    /// loop, or by its running job's completion (`uploadStepped`).
    private func release(_ c: Connection) {
        // A running content check owns the open file and closes it when it reports back (closing it
        // here would wait for the check's read, on the loop).
        if c.contentCheckRunning {
            c.contentCheckRunning = false
            c.file = nil
        }
        guard let feed = c.releaseRequestResources(), !feed.jobRunning, let opened = feed.opened else { return }
        pools.quick.submit { opened.abandon() }
    }

    // MARK: Event streams

    /// Answers `/v1/events` with a Server-Sent Events head and keeps the connection for event frames.
    /// The body is close-delimited: the stream ends when either side closes. The head goes out
    /// first; frames (a reconnecting client's backlog included) follow as the client reads them.
    private func startEventStream(_ c: Connection, store: String?, after lastEventID: UInt64?, discardBody: Bool) {
        if discardBody {
            queue(APIError(.badRequest, "GET /v1/events takes no body").response(close: true), to: c)
            return
        }
        recordMetrics(c, status: 200, bytesOut: 0)
        // The head a HEAD is answered with, so that the two cannot drift apart.
        Response.eventStreamHead().serialize(version: c.version, close: true, dateLine: dateLine.current(), into: &c.out)
        c.state = .streaming
        c.keepAlive = false
        streamingCount += 1
        if streamingCount == 1 { nextHeartbeat = DispatchTime.now() + heartbeatInterval }
        let fd = c.socket.rawValue, serial = c.serial
        c.subscription = router.events.subscribe(store: store, after: lastEventID) { [weak self] in
            self?.post { loop in loop.pumpEvents(fd: fd, serial: serial) }
        }
        // `drive` (the caller) writes the head, then takes the first frames.
    }

    /// The log has news for one streaming connection: new events, or that it was dropped.
    private func pumpEvents(fd: Int32, serial: UInt64) {
        guard Int(fd) < connections.count, let c = connections[Int(fd)], c.serial == serial, c.state == .streaming,
            let subscription = c.subscription
        else { return }
        // Checked here too: a dropped reader usually has output stuck, so `drive` would not get to `take`.
        if subscription.isDropped {
            log(.info, "fd \(fd): event subscriber too slow, dropped")
            close(c)
            return
        }
        drive(c)
    }

    private func sendHeartbeats() {
        nextHeartbeat = DispatchTime.now() + heartbeatInterval
        // Only idle streams need one; a stream with output waiting is not idle.
        for case let c? in connections where c.state == .streaming && !c.hasPendingOutput {
            c.out += SSEFrame.heartbeat
            drive(c)
        }
    }

    /// The one place a request ends (its response is queued, or an event stream's head): metrics
    /// and the access log. Durations run from the parsed head to this point.
    private func recordMetrics(_ c: Connection, status: Int, bytesOut: Int64) {
        let nanoseconds = DispatchTime.now().uptimeNanoseconds &- c.requestStarted
        router.metrics.record(
            shard: index, operation: c.operation, status: status, seconds: Double(nanoseconds) / 1e9, bytesIn: c.bodyBytes, bytesOut: bytesOut)
        if accessLog != nil {
            accessLog!.record(
                method: c.requestMethod, target: c.requestTarget, status: status, bodyBytes: bytesOut, nanoseconds: nanoseconds, peer: c.peer)
        }
    }

    /// Store work finished: send its response if the connection is still the one that asked.
    private func complete(fd: Int32, serial: UInt64, response: Response) {
        assertOnLoop()
        guard Int(fd) < connections.count, let c = connections[Int(fd)], c.serial == serial, c.state == .waiting,
            !c.responseQueued
        else {
            response.file?.handle.close()
            return
        }
        queue(response, to: c)
        drive(c)
    }
}
