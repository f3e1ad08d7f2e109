import Foundation
import Glibc
import Synchronization

/// A lean closed-loop HTTP/1.1 load generator over a Unix socket: N keep-alive connections, each
/// with one request in flight, sending its next request as soon as the previous response is in.
///
/// It shares the machine's 2 cores with the server it measures, so it is built to cost as little
/// CPU per request as possible (docs/BENCHMARKS.md, "Daemon scenarios"):
/// - requests are bytes prepared before the clock starts (``RequestPlan``); a PUT's head and body go
///   out in one `sendmsg`;
/// - responses are read with `recv` into buffers allocated once, and only the status code and
///   `Content-Length` are looked at (``ResponseScanner``); bodies are read into one reused buffer;
/// - by default one thread drives all connections through a level-triggered epoll: each
///   connection is registered once and a request costs one `send` and usually one `recv`, plus a
///   share of an `epoll_wait` that often returns several responses at once (the alternatives are
///   in ``Mode``);
/// - each request is timed with `clock_gettime(CLOCK_MONOTONIC)` into a preallocated array.
///
/// A run ends after a fixed number of requests (the plan's). Responses that are not 2xx, or GET
/// bodies of the wrong length, are counted; a run with any such failure throws.
final class LoadGenerator: @unchecked Sendable {
    // @unchecked: `descriptors` is set in `init`; each run hands every connection to exactly one thread.

    /// How the connections are driven.
    enum Mode: Sendable, CustomStringConvertible {
        /// `threads` threads, each driving its share of the connections through its own epoll.
        case epoll(threads: Int)
        /// One thread per connection, blocking in `send` and `recv`.
        case blocking

        /// The mode used unless `BLOB_BENCH_LOADGEN` says otherwise: one epoll thread takes the least
        /// CPU per request, which leaves the most to the server (the bench prints the generator's CPU
        /// per request under each daemon table; set the variable to compare).
        static var configured: Mode {
            switch ProcessInfo.processInfo.environment["BLOB_BENCH_LOADGEN"] {
            case "blocking": return .blocking
            case "epoll2": return .epoll(threads: 2)
            default: return .epoll(threads: 1)
            }
        }

        var description: String {
            switch self {
            case .epoll(let threads): return "epoll×\(threads)"
            case .blocking: return "blocking"
            }
        }
    }

    /// What one run measured.
    struct Outcome: Sendable {
        /// From the first request sent to the last response received (over all threads).
        var elapsed: Duration
        /// Requests completed.
        var requests: Int
        /// CPU time the generator's threads used in the timed part (user + system), nanoseconds.
        var cpuNanoseconds: UInt64
        /// Every request's latency, nanoseconds, in completion order per thread.
        var latencies: [UInt64]
    }

    /// A run that did not go as planned.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The connected sockets (blocking mode for sends; reads use `MSG_DONTWAIT` in epoll mode).
    let descriptors: [Int32]
    let mode: Mode

    /// Opens `connections` keep-alive connections to `socketPath` (untimed).
    init(socketPath: String, connections: Int, mode: Mode = .configured) throws {
        self.mode = mode
        var opened: [Int32] = []
        do {
            for _ in 0..<connections { opened.append(try Socket.connect(path: socketPath).fd) }
        } catch {
            for fd in opened { Glibc.close(fd) }
            throw Failure(description: "cannot connect to \(socketPath): \(error)")
        }
        descriptors = opened
    }

    /// Takes over `descriptors`, already connected (the S3 scenarios' TCP connections to the gateway).
    init(descriptors: [Int32], mode: Mode = .configured) {
        self.mode = mode
        self.descriptors = descriptors
    }

    deinit { for fd in descriptors { Glibc.close(fd) } }

    /// Sends every request of `plan` over the connections and waits for every response.
    /// Blocking work runs on dedicated threads (``Workers``), never on the cooperative pool.
    func run(_ plan: RequestPlan) async throws -> Outcome {
        let threadCount: Int
        switch mode {
        case .epoll(let threads): threadCount = max(1, min(threads, descriptors.count))
        case .blocking: threadCount = descriptors.count
        }
        let total = plan.requests.count
        let results = Mutex<[ThreadOutcome?]>(Array(repeating: nil, count: threadCount))
        let descriptors = self.descriptors
        let blocking = if case .blocking = mode { true } else { false }
        try await Workers.run(threadCount) { thread in
            // Each thread takes a contiguous share of the requests and every threadCount-th connection.
            let range = (total * thread / threadCount)..<(total * (thread + 1) / threadCount)
            let mine = stride(from: thread, to: descriptors.count, by: threadCount).map { descriptors[$0] }
            let driver = ConnectionDriver(plan: plan, range: range, descriptors: mine, blocking: blocking)
            defer { driver.release() }
            let outcome = try driver.drive()
            results.withLock { $0[thread] = outcome }
        }
        let outcomes = results.withLock { $0.compactMap { $0 } }
        let failures = outcomes.reduce(0) { $0 + $1.failures }
        if failures > 0 {
            let example = outcomes.compactMap(\.firstFailure).first ?? "?"
            throw Failure(description: "\(failures) of \(total) responses failed (first: \(example))")
        }
        let start = outcomes.map(\.start).min() ?? 0
        let end = outcomes.map(\.end).max() ?? 0
        return Outcome(
            elapsed: .nanoseconds(Int64(end &- start)), requests: outcomes.reduce(0) { $0 + $1.completed },
            cpuNanoseconds: outcomes.reduce(0) { $0 + $1.cpuNanoseconds }, latencies: outcomes.flatMap(\.latencies))
    }

    /// What one thread measured.
    struct ThreadOutcome: Sendable {
        var start: UInt64
        var end: UInt64
        var completed: Int
        var failures: Int
        var firstFailure: String?
        var cpuNanoseconds: UInt64
        var latencies: [UInt64]
    }

    /// `CLOCK_MONOTONIC` in nanoseconds (a vDSO call, no system call).
    @inline(__always)
    static func now(_ clock: clockid_t = CLOCK_MONOTONIC) -> UInt64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// One thread's share of a run: its connections, their parse state and buffers, all allocated
/// before the clock starts. Not thread-safe; used by the one thread that created it.
private final class ConnectionDriver {
    /// Where one connection is in its current exchange.
    struct State {
        var fd: Int32
        /// Index of the request in flight, or -1.
        var request: Int
        /// When it was sent (CLOCK_MONOTONIC ns).
        var sentAt: UInt64
        /// Head bytes received so far (in the connection's head buffer).
        var filled: Int
        /// Body bytes still to come, or -1 while the head is incomplete.
        var bodyRemaining: Int
    }

    /// Head bytes a response may have (both servers send well under 1 KiB).
    static let headCapacity = 16 * 1024
    /// Body bytes read per `recv` once the head is in (1 MiB bodies arrive in socket-buffer-sized pieces).
    static let sinkCapacity = 256 * 1024

    let plan: RequestPlan
    let range: Range<Int>
    let blocking: Bool
    let states: UnsafeMutableBufferPointer<State>
    let heads: UnsafeMutablePointer<UInt8>
    let sink: UnsafeMutableRawPointer
    let latencies: UnsafeMutableBufferPointer<UInt64>
    var completed = 0
    var failures = 0
    var firstFailure: String?

    init(plan: RequestPlan, range: Range<Int>, descriptors: [Int32], blocking: Bool) {
        self.plan = plan
        self.range = range
        self.blocking = blocking
        states = .allocate(capacity: descriptors.count)
        for (index, fd) in descriptors.enumerated() {
            states[index] = State(fd: fd, request: -1, sentAt: 0, filled: 0, bodyRemaining: -1)
        }
        heads = .allocate(capacity: Self.headCapacity * max(descriptors.count, 1))
        sink = .allocate(byteCount: Self.sinkCapacity, alignment: 4096)
        latencies = .allocate(capacity: max(range.count, 1))
        latencies.initialize(repeating: 0)
    }

    /// Frees the buffers (the sockets belong to the generator).
    func release() {
        states.deallocate()
        heads.deallocate()
        sink.deallocate()
        latencies.deallocate()
    }

    /// Runs this thread's share to the end.
    func drive() throws -> LoadGenerator.ThreadOutcome {
        let epoll: Epoll? = blocking ? nil : try Epoll()
        defer { epoll?.close() }
        if let epoll {
            // Level-triggered and registered once: no epoll_ctl per request.
            for slot in states.indices {
                try epoll.add(states[slot].fd, events: [.readable], token: UInt64(slot))
            }
        }
        var events = [Epoll.Event](repeating: Epoll.Event(), count: max(states.count, 1))
        let cpuStart = LoadGenerator.now(CLOCK_THREAD_CPUTIME_ID)
        let start = LoadGenerator.now()
        var next = range.lowerBound
        for slot in states.indices where next < range.upperBound {
            try send(slot, request: next)
            next += 1
        }
        let total = range.count
        if let epoll {
            var idleSince: UInt64 = 0
            while completed < total {
                let ready = try epoll.wait(into: &events, timeoutMilliseconds: 1000)
                if ready == 0 {
                    // A server that stops answering must fail the run, not hang it.
                    let now = LoadGenerator.now()
                    if idleSince == 0 { idleSince = now } else if now - idleSince > 30_000_000_000 {
                        throw LoadGenerator.Failure(description: "no response for 30 s (\(completed) of \(total) done)")
                    }
                    continue
                }
                idleSince = 0
                for index in 0..<ready {
                    let slot = Int(events[index].token)
                    if try receive(slot), next < range.upperBound {
                        try send(slot, request: next)
                        next += 1
                    }
                }
            }
        } else {
            // Blocking: one connection per thread; `receive` returns only once the response is complete.
            while completed < total {
                _ = try receive(0)
                if next < range.upperBound {
                    try send(0, request: next)
                    next += 1
                }
            }
        }
        let end = LoadGenerator.now()
        let cpu = LoadGenerator.now(CLOCK_THREAD_CPUTIME_ID) - cpuStart
        return LoadGenerator.ThreadOutcome(
            start: start, end: end, completed: completed, failures: failures, firstFailure: firstFailure, cpuNanoseconds: cpu,
            latencies: Array(latencies[0..<completed]))
    }

    /// Sends request `index` on connection `slot` (head and body in one `sendmsg`).
    @inline(__always)
    private func send(_ slot: Int, request index: Int) throws {
        let request = plan.requests[index]
        let fd = states[slot].fd
        var vectors = (
            iovec(iov_base: plan.heads.baseAddress! + request.headOffset, iov_len: request.headLength),
            iovec(iov_base: UnsafeMutableRawPointer(mutating: plan.workload.content.baseAddress!), iov_len: request.hasBody ? plan.workload.content.count : 0)
        )
        var remaining = request.headLength + (request.hasBody ? plan.workload.content.count : 0)
        states[slot].request = index
        states[slot].sentAt = LoadGenerator.now()
        try withUnsafeMutableBytes(of: &vectors) { raw in
            let iov = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
            var message = msghdr()
            message.msg_iov = iov
            message.msg_iovlen = request.hasBody ? 2 : 1
            // The socket is blocking for writes: a short write only happens on a signal or a huge body.
            while remaining > 0 {
                let sent = sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    throw LoadGenerator.Failure(description: "send: \(String(cString: strerror(errno)))")
                }
                remaining -= sent
                // Advance past what went out (rare).
                var skip = sent
                var vector = 0
                while skip > 0, vector < Int(message.msg_iovlen) {
                    let take = min(skip, iov[vector].iov_len)
                    iov[vector].iov_base = iov[vector].iov_base.map { $0 + take }
                    iov[vector].iov_len -= take
                    skip -= take
                    if iov[vector].iov_len == 0 { vector += 1 }
                }
                if vector > 0 {
                    message.msg_iov = iov + vector
                    message.msg_iovlen -= vector
                }
            }
        }
    }

    /// Reads what has arrived on `slot`; returns true when its response is complete (and recorded).
    /// In epoll mode it stops as soon as a read comes back short (the socket is then very likely
    /// drained; level-triggered epoll reports it again if not), saving an `EAGAIN` call per response.
    @inline(__always)
    private func receive(_ slot: Int) throws -> Bool {
        let flags = blocking ? Int32(0) : Int32(MSG_DONTWAIT)
        let fd = states[slot].fd
        let head = heads + slot * Self.headCapacity
        while true {
            if states[slot].bodyRemaining < 0 {
                let filled = states[slot].filled
                let space = Self.headCapacity - filled
                guard space > 0 else { throw LoadGenerator.Failure(description: "response head over \(Self.headCapacity) bytes") }
                let count = recv(fd, head + filled, space, flags)
                if count <= 0 { if try retry(count) { continue } else { return false } }
                states[slot].filled = filled + count
                let end = ResponseScanner.headEnd(head, from: max(0, filled - 3), to: filled + count)
                if end < 0 {
                    if !blocking, count < space { return false }
                    continue
                }
                let parsed: ResponseScanner.Head
                do { parsed = try ResponseScanner.parse(head, length: end) } catch {
                    throw LoadGenerator.Failure(description: "unusable response (\(error)): \(String(decoding: UnsafeBufferPointer(start: head, count: min(end, 300)), as: UTF8.self))")
                }
                let request = plan.requests[states[slot].request]
                if parsed.status < 200 || parsed.status > 299
                    || (request.expectedBodyLength >= 0 && parsed.contentLength != request.expectedBodyLength)
                {
                    failures += 1
                    if firstFailure == nil {
                        // The status line and the body length are enough to recognise the failure.
                        var lineEnd = 0
                        while lineEnd < end, head[lineEnd] != 0x0D { lineEnd += 1 }
                        firstFailure = String(decoding: UnsafeBufferPointer(start: head, count: lineEnd), as: UTF8.self)
                            + " (body \(parsed.contentLength) bytes) for request \(states[slot].request)"
                    }
                }
                let extra = filled + count - end
                // One request in flight per connection: nothing may follow this response's body.
                guard extra <= parsed.contentLength else { throw LoadGenerator.Failure(description: "bytes after a response") }
                states[slot].bodyRemaining = parsed.contentLength - extra
                if states[slot].bodyRemaining == 0 { return finish(slot) }
                if !blocking, count < space { return false }
            } else {
                let want = min(states[slot].bodyRemaining, Self.sinkCapacity)
                let count = recv(fd, sink, want, flags)
                if count <= 0 { if try retry(count) { continue } else { return false } }
                states[slot].bodyRemaining -= count
                if states[slot].bodyRemaining == 0 { return finish(slot) }
                if !blocking, count < want { return false }
            }
        }
    }

    /// After a `recv` that returned `count` ≤ 0: true to retry (EINTR), false to wait (EAGAIN); throws otherwise.
    private func retry(_ count: Int) throws -> Bool {
        if count == 0 { throw LoadGenerator.Failure(description: "the server closed a connection (\(completed) responses in)") }
        if errno == EINTR { return true }
        if errno == EAGAIN || errno == EWOULDBLOCK { return false }
        throw LoadGenerator.Failure(description: "recv: \(String(cString: strerror(errno)))")
    }

    /// Records the finished exchange on `slot` and makes the connection idle.
    @inline(__always)
    private func finish(_ slot: Int) -> Bool {
        latencies[completed] = LoadGenerator.now() &- states[slot].sentAt
        completed += 1
        states[slot].request = -1
        states[slot].filled = 0
        states[slot].bodyRemaining = -1
        return true
    }
}
