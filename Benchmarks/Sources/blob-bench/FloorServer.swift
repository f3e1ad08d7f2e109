import Glibc

/// `blob-bench __floor-http FOLDER SOCKET`: the least work an HTTP server can do to answer the
/// daemon-get requests, run as a third server beside blobd and nginx to measure the machine's ceiling
/// for any server in that scenario.
///
/// The design is the leanest event-loop server this machine's notes describe, cut to the bone: a blocking acceptor dealing connections to 2 edge-triggered epoll loops, per-descriptor state
/// in a preallocated table, no allocation per request, no HTTP parsing beyond finding the blank line
/// and the path, the file opened by a path built in a reused buffer, one `pread`, and head and body in
/// one `send` (`sendfile` for what does not fit 64 KiB). It checks nothing and serves only GET of the
/// files in FOLDER under ``RequestPlan/pathPrefix``: it is a measuring stick, not a server.
///
/// Whatever blobd does beyond this (parsing every header, validating the identifier, finding the
/// bucket, checking the header checksum, metadata headers, metrics, …) is the price of being a store.
enum FloorServer {
    /// The hidden first argument that turns `blob-bench` into the floor server.
    static let childCommand = "__floor-http"

    /// Runs the server (never returns) when `arguments` ask for it; nil otherwise.
    static func runIfChild(_ arguments: [String]) -> Int32? {
        guard arguments.count > 1, arguments[1] == childCommand else { return nil }
        guard arguments.count == 4 else {
            Console.progress("usage: blob-bench \(childCommand) FOLDER SOCKET")
            return 64
        }
        do {
            try serve(folder: arguments[2], socketPath: arguments[3])
        } catch {
            Console.progress("blob-bench \(childCommand): \(error)")
        }
        return 1
    }

    /// Descriptors above this are refused (the table is allocated once).
    private static let maximumDescriptor = 4096
    private static let loopCount = 2

    private static func serve(folder: String, socketPath: String) throws {
        signal(SIGPIPE, SIG_IGN)
        let listener = try Socket.listen(path: socketPath)
        let table = UnsafeMutablePointer<FloorConnection>.allocate(capacity: maximumDescriptor)
        table.initialize(repeating: FloorConnection(), count: maximumDescriptor)
        let loops = try (0..<loopCount).map { _ in try Epoll() }
        let pathPrefix = Array(folder.utf8) + [UInt8(ascii: "/")]
        for epoll in loops {
            let thread = FloorThread { FloorLoop(epoll: epoll, table: table, pathPrefix: pathPrefix).run() }
            thread.start()
        }
        var next = 0
        while true {
            guard let socket = try listener.accept(nonBlocking: true) else { continue }
            guard Int(socket.fd) < maximumDescriptor else {
                socket.close()
                continue
            }
            // As blobd does before a large body (EventLoop.largeBodySendBuffer): fewer sendfile rounds per MiB.
            try? socket.setSendBufferSize(1 << 20)
            // The table slot is written before the loop can see the descriptor (epoll_ctl is the hand-off).
            table[Int(socket.fd)].reset()
            try loops[next].add(socket.fd, events: [.readable, .writable, .peerClosed, .edgeTriggered], token: UInt64(socket.fd))
            next = (next + 1) % loops.count
        }
    }
}

/// One connection's buffers and progress; a slot of the floor server's descriptor table, touched by
/// the acceptor before the descriptor is registered and by one loop thread afterwards.
struct FloorConnection {
    static let inputCapacity = 4096
    /// Room for the longest head written in front of a body.
    static let headRoom = 128
    static let bodyCapacity = 64 * 1024

    var input: UnsafeMutableRawBufferPointer?
    var inputCount = 0
    var output: UnsafeMutableRawBufferPointer?
    var outputStart = 0
    var outputEnd = 0
    var file: Int32 = -1
    var fileOffset: Int64 = 0
    var fileEnd: Int64 = 0
    /// A short read emptied the socket: no `recv` until epoll reports input again.
    var drained = false

    /// Ready for a new connection; buffers are allocated on first use and kept for the descriptor.
    mutating func reset() {
        if input == nil {
            input = .allocate(byteCount: Self.inputCapacity, alignment: 64)
            output = .allocate(byteCount: Self.headRoom + Self.bodyCapacity, alignment: 64)
        }
        inputCount = 0
        drained = false
        outputStart = 0
        outputEnd = 0
        if file >= 0 { Glibc.close(file) }
        file = -1
    }
}

/// A plain thread running one closure (Foundation's `Thread` is avoided to keep the child minimal).
private final class FloorThread: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    func start() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { context in
            Unmanaged<FloorThread>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    }
}

/// One event loop of the floor server.
private struct FloorLoop {
    let epoll: Epoll
    let table: UnsafeMutablePointer<FloorConnection>
    let pathPrefix: [UInt8]

    func run() {
        var events = [Epoll.Event](repeating: Epoll.Event(), count: 256)
        let path = UnsafeMutablePointer<CChar>.allocate(capacity: 4096)
        for (index, byte) in pathPrefix.enumerated() { path[index] = CChar(bitPattern: byte) }
        let input: Epoll.Events = [.readable, .peerClosed, .hangUp, .error]
        while true {
            guard let count = try? epoll.wait(into: &events, timeoutMilliseconds: -1) else { continue }
            for index in 0..<count {
                let fd = Int32(truncatingIfNeeded: events[index].token)
                // A writable edge alone (the client took a response) brings no bytes to read.
                if !Epoll.Events(rawValue: events[index].events).isDisjoint(with: input) { table[Int(fd)].drained = false }
                if !drive(fd, &table[Int(fd)], path: path) {
                    if table[Int(fd)].file >= 0 { Glibc.close(table[Int(fd)].file) }
                    table[Int(fd)].file = -1
                    Glibc.close(fd)
                }
            }
        }
    }

    /// Makes all the progress possible; false when the connection is over.
    private func drive(_ fd: Int32, _ c: inout FloorConnection, path: UnsafeMutablePointer<CChar>) -> Bool {
        let input = c.input!, output = c.output!
        while true {
            // Pending output first: the head and in-memory body, then the rest of a large file.
            while c.outputStart < c.outputEnd {
                let sent = Glibc.send(fd, output.baseAddress! + c.outputStart, c.outputEnd - c.outputStart, Int32(MSG_NOSIGNAL))
                if sent < 0 { return errno == EAGAIN }
                c.outputStart += sent
            }
            while c.file >= 0 && c.fileOffset < c.fileEnd {
                var offset = off_t(c.fileOffset)
                let sent = Glibc.sendfile(fd, c.file, &offset, Int(c.fileEnd - c.fileOffset))
                if sent < 0 { return errno == EAGAIN }
                if sent == 0 { return false }
                c.fileOffset = Int64(offset)
            }
            if c.file >= 0 {
                Glibc.close(c.file)
                c.file = -1
            }
            if let headEnd = Self.headEnd(input, count: c.inputCount) {
                respond(to: input, headEnd: headEnd, &c, path: path)
                let rest = c.inputCount - headEnd
                if rest > 0 { input.baseAddress!.copyMemory(from: input.baseAddress! + headEnd, byteCount: rest) }
                c.inputCount = rest
                continue
            }
            if c.drained { return true }
            let space = FloorConnection.inputCapacity - c.inputCount
            if space == 0 { return false }
            let received = Glibc.recv(fd, input.baseAddress! + c.inputCount, space, 0)
            if received < 0 { return errno == EAGAIN }
            if received == 0 { return false }
            c.inputCount += received
            // A short read emptied the socket; edge-triggered epoll reports the next arrival.
            if received < space { c.drained = true }
        }
    }

    /// One past the blank line ending the first head in `input[..<count]`, or nil.
    private static func headEnd(_ input: UnsafeMutableRawBufferPointer, count: Int) -> Int? {
        guard count >= 4 else { return nil }
        let bytes = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var index = 3
        while index < count {
            if bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 3] == 0x0D { return index + 1 }
            index += 1
        }
        return nil
    }

    /// Opens the requested file, reads up to 64 KiB of it behind the head room, and queues head and body.
    private func respond(to input: UnsafeMutableRawBufferPointer, headEnd: Int, _ c: inout FloorConnection, path: UnsafeMutablePointer<CChar>) {
        let bytes = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // "GET /v1/stores/bench/blobs/ID HTTP/1.1": the identifier runs from the prefix to the space.
        let start = 4 + RequestPlan.pathPrefix.utf8.count
        var end = start
        while end < headEnd && bytes[end] != 0x20 { end += 1 }
        let output = c.output!
        let body = output.baseAddress! + FloorConnection.headRoom
        var length = -1
        let name = UnsafeMutableRawPointer(path + pathPrefix.count)
        if end - start < 4096 - pathPrefix.count - 1 {
            name.copyMemory(from: bytes + start, byteCount: end - start)
            path[pathPrefix.count + end - start] = 0
            let file = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            if file >= 0 {
                length = Glibc.pread(file, body, FloorConnection.bodyCapacity, 0)
                if length == FloorConnection.bodyCapacity {
                    var status = stat()
                    fstat(file, &status)
                    c.file = file
                    c.fileOffset = Int64(length)
                    c.fileEnd = Int64(status.st_size)
                } else {
                    Glibc.close(file)
                }
            }
        }
        let total = length < 0 ? 0 : c.file >= 0 ? Int(c.fileEnd) : length
        let head = Self.head(found: length >= 0, contentLength: total)
        let headStart = FloorConnection.headRoom - head.count
        head.withUnsafeBytes { (output.baseAddress! + headStart).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        c.outputStart = headStart
        c.outputEnd = FloorConnection.headRoom + max(length, 0)
    }

    /// The response head, built on the stack as a small fixed array: no allocation.
    private static func head(found: Bool, contentLength: Int) -> FloorHead {
        var head = FloorHead()
        head.append(found ? "HTTP/1.1 200 OK\r\nContent-Length: " : "HTTP/1.1 404 Not Found\r\nContent-Length: ")
        head.append(number: contentLength)
        head.append("\r\n\r\n")
        return head
    }
}

/// A response head of at most ``FloorConnection/headRoom`` bytes, in a tuple-backed buffer.
private struct FloorHead {
    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private(set) var count = 0

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { source in
            for byte in source { append(byte: byte) }
        }
    }

    mutating func append(number: Int) {
        var divisor = 1
        while divisor <= number / 10 { divisor *= 10 }
        var rest = number
        repeat {
            append(byte: UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        } while divisor > 0
    }

    private mutating func append(byte: UInt8) {
        let index = count
        withUnsafeMutableBytes(of: &storage) { $0[index] = byte }
        count = index + 1
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        Swift.withUnsafeBytes(of: storage) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
}

/// The floor server as a ``BenchServer``: a child process serving `directory` on `socketPath`.
final class FloorHTTPServer: BenchServer, @unchecked Sendable {
    // @unchecked: all stored properties are constants.

    let socketPath: String
    let pid: pid_t
    var processIDs: [pid_t] { [pid] }

    init(directory: String, socketPath: String) throws {
        self.socketPath = socketPath
        pid = try ChildProcess.spawn([BenchDaemon.executablePath(), FloorServer.childCommand, directory, socketPath])
        try ChildProcess.waitUntilAccepting(socketPath, pid: pid, what: "the floor server", log: nil)
    }

    func stop() {
        ChildProcess.stop(pid, signal: SIGKILL)
        unlink(socketPath)
    }
}
