import BlobStore
import BlobSystem
import HTTP1

/// One client connection's state. Owned by exactly one event loop (the one it was dealt to by the
/// acceptor, ``EventLoop/adopt(_:refused:peer:)``) and touched only on that loop's thread: store work
/// for it runs elsewhere and reports back through the loop's inbox, naming the connection by
/// descriptor and ``serial``.
final class Connection {
    /// Where the connection is in its current request.
    enum State {
        /// Waiting for (more of) a request head.
        case head
        /// Reading a request body.
        case body
        /// A response is being produced elsewhere (a blocking-work thread) or being written.
        case waiting
        /// Sending change events (`/v1/events`) until the client or the daemon closes.
        case streaming
        /// The response that ends the connection is out and the rest of a request body is read and
        /// discarded, within limits, before closing (see `EventLoop.lingerByteLimit`).
        case lingering
    }

    /// A request body being read: staged for the connection's ``upload``, or discarded before an error response.
    struct BodyReader {
        /// Whether payload bytes go to ``Connection/upload`` (else they are discarded).
        var feedsUpload = false
        /// The answer to send once a discarded body has been read.
        var discardResponse: Response?
        /// Bytes left when framed by `Content-Length`.
        var remaining: Int64
        /// The decoder when chunked.
        var chunked: ChunkedDecoder?
    }

    /// Bytes the read buffer holds: a whole request head must fit (see `EventLoop.headLimits`).
    static let bufferCapacity = 64 * 1024

    let socket: FileDescriptor
    /// Distinguishes this connection from a later one that reuses the same descriptor number.
    let serial: UInt64
    /// The read buffer, allocated once for the connection's life.
    let buffer: UnsafeMutableRawBufferPointer
    /// Unconsumed bytes are `buffer[start..<end]`.
    var start = 0
    var end = 0
    var parser: HTTPRequestParser
    var state = State.head
    var body: BodyReader?
    /// The put whose body this connection is reading or whose commit it awaits.
    var upload: UploadFeed?
    /// Response bytes being written, from `outOffset`.
    var out: [UInt8] = []
    var outOffset = 0
    /// A file body to `sendfile` after `out`.
    var file: Response.FileBody?
    /// A work thread is checking ``file``'s content (`EventLoop.checkAhead`) and owns the open
    /// file until it reports back.
    var contentCheckRunning = false
    /// ``file``'s content has passed its check up to this file offset (`Int64.max`: all of it), as
    /// last read from its handle while no check ran; what lies before it may be sent while the
    /// next part is checked.
    var contentCheckedThrough: Int64 = 0
    /// The socket's send buffer was enlarged for a large body (done once per connection).
    var sendBufferRaised = false
    /// Whether finishing the write ends the current request (false for `100 Continue`).
    var responseQueued = false
    var closeAfterResponse = false
    var version = HTTPVersion.http1_1
    var keepAlive = true
    /// The current request is HEAD: whatever the response, its body is left out.
    var requestIsHead = false
    /// The peer has shut down its side; answer what is buffered, then close.
    var inputClosed = false
    /// Whether the socket may hold unread bytes. A short read drains the socket's queue, and with
    /// edge-triggered epoll any byte that arrives later raises a new event (which sets this again),
    /// so after a short read the loop waits for that event instead of spending a `recv` that would
    /// only say `EAGAIN` — one syscall less per request.
    var mayHaveInput = true
    /// epoll reported that the peer shut down (or the socket failed): the end of input is already
    /// queued behind any data, and no later edge will announce it, so reads go on until they see it.
    var hangUpSeen = false
    /// The change events this connection streams, in state `streaming`.
    var subscription: EventSubscription?
    /// For metrics: when the current request's head was parsed (monotonic ns), what it does, and its body bytes.
    var requestStarted: UInt64 = 0
    var operation = MetricOperation.other
    var bodyBytes: Int64 = 0
    /// For the access log (set only when it is on): the current request's method and target
    /// (`nil` when its head could not be parsed), and who connected (`nil` if the kernel did not say).
    var requestMethod: HTTPMethod?
    var requestTarget: ArraySlice<UInt8>?
    var peer: PeerCredentials?
    /// The current request has (or may have) body bytes still to come: set when its head is read
    /// (or could not be parsed), cleared once the body is read to its end. A connection closed while
    /// this is set lingers first, so that a client still sending gets to read the answer.
    var bodyPending = false
    /// In state `lingering`: bytes discarded so far.
    var lingered = 0
    /// The peer failed the credentials check: its first request gets 403 and the connection closes.
    var refused = false
    var closed = false

    init(socket: FileDescriptor, serial: UInt64, limits: HTTPHeadLimits) {
        self.socket = socket
        self.serial = serial
        buffer = .allocate(byteCount: Connection.bufferCapacity, alignment: 16)
        parser = HTTPRequestParser(limits: limits, requiresHost: false)
        out.reserveCapacity(4096)
    }

    deinit { buffer.deallocate() }

    /// Whether bytes (or a file) are waiting to be written.
    var hasPendingOutput: Bool { outOffset < out.count || file != nil }

    /// Whether the connection sits between requests with nothing buffered or owed: safe to close on shutdown.
    var isIdle: Bool { state == .head && start == end && !hasPendingOutput }

    /// Moves unconsumed bytes to the front so the buffer has room to read into.
    func compact() {
        guard start > 0 else { return }
        let count = end - start
        if count > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: count) }
        start = 0
        end = count
    }

    /// Drops the current request's body reader and open blob, and hands back its upload (which
    /// the loop must abandon off the loop: cancelling removes a temp file).
    func releaseRequestResources() -> UploadFeed? {
        body = nil
        file?.handle.close()
        file = nil
        defer { upload = nil }
        return upload
    }
}
