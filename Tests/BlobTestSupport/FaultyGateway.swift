import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of an S3 gateway that fails on demand, so that one test can take "the
/// gateway" down, stall it or cut it mid-transfer without touching the cluster other tests share.
///
/// Point a backend at ``url`` instead of the gateway's. ``inject(_:)`` changes the behaviour for
/// the connections open at that moment (their byte counts start again at zero) and for new ones.
///
/// Threads: one accepts; one per connection pumps bytes both ways, checking the fault between
/// reads (every 20 ms at most). `lock` guards the fault, its generation, the listener, `stopped` and
/// the counts.
package final class FaultyGateway: @unchecked Sendable {
    /// How the proxy misbehaves.
    package enum Fault: Sendable, Equatable {
        /// Forwards everything.
        case none
        /// Stopped: the listener is closed (new connections are refused) and open connections are
        /// closed. Injecting another fault listens again on the same port.
        case down
        /// Reads requests and answers nothing, forwarding nothing, until the fault changes.
        case stall
        /// Stalls (as ``stall``) only the connections that carry a request whose bytes contain
        /// `text` (a key in the request line, say), from that request on; forwards the others.
        /// Requests are told apart by the bytes of each read, so `text` must not span two reads (a
        /// request line does not).
        case stallRequests(containing: String)
        /// Forwards the first `afterBytes` bytes a client sends from now on, then closes both sides.
        case cutRequest(afterBytes: Int)
        /// Forwards the first `afterBytes` bytes the gateway answers from now on, then closes both sides.
        case cutResponse(afterBytes: Int)
        /// Forwards what clients send and swallows what the gateway answers, keeping the connections
        /// open: the gateway carries the requests out, and their senders wait for answers that never
        /// come (until their timeouts).
        case dropResponses
    }

    /// The proxy's port on 127.0.0.1.
    package let port: UInt16
    private let upstreamHost: String
    private let upstreamPort: UInt16
    private let lock = NSLock()
    private var fault = Fault.none
    private var generation = 0
    private var listener: FileDescriptor?
    private var stopped = false
    private var accepted = 0
    private var stalled = 0

    /// A proxy in front of the gateway at `upstreamURL` (`http://HOST:PORT`).
    package init(upstreamURL: String) throws {
        guard let components = URLComponents(string: upstreamURL), let host = components.host, let port = components.port else {
            throw HarnessError("FaultyGateway: cannot read host and port from \(upstreamURL)")
        }
        upstreamHost = host
        upstreamPort = UInt16(port)
        let listener = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        self.port = try TCPSocket.localAddress(listener).port
        self.listener = listener
        startAccepting(listener)
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT`.
    package var url: String { "http://127.0.0.1:\(port)" }

    /// How many connections the proxy has accepted.
    package var acceptedConnections: Int { lock.withLock { accepted } }

    /// How many connections hold at least one swallowed request now (stalled, not yet closed).
    package var stalledConnections: Int { lock.withLock { stalled } }

    /// Waits up to `timeout` until at least `count` connections are stalled; whether they are.
    package func waitForStalledConnections(_ count: Int, timeout: Duration = .seconds(20)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while stalledConnections < count {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return true
    }

    /// Starts misbehaving as `fault` says (``Fault/none`` to recover).
    package func inject(_ fault: Fault) {
        var closing: FileDescriptor?
        var reopen = false
        lock.withLock {
            guard !stopped else { return }
            if fault == .down {
                closing = listener
                listener = nil
            } else if listener == nil {
                reopen = true
            }
            self.fault = fault
            generation += 1
            stalled = 0
        }
        if let closing {
            // shutdown wakes the accepting thread out of accept(2); it then closes the descriptor.
            _ = Glibc.shutdown(closing.rawValue, Int32(SHUT_RDWR))
        }
        if reopen {
            // The accepting thread closes the old listener once shutdown wakes it: until then the
            // port is taken, so try again for a while.
            for _ in 0..<500 {
                if let fresh = try? TCPSocket.listen(host: "127.0.0.1", port: port) {
                    lock.withLock { listener = fresh }
                    startAccepting(fresh)
                    break
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    /// Closes the listener and every connection.
    package func stop() {
        let closing: FileDescriptor? = lock.withLock {
            stopped = true
            defer { listener = nil }
            return listener
        }
        if let closing { _ = Glibc.shutdown(closing.rawValue, Int32(SHUT_RDWR)) }
    }

    private func startAccepting(_ listener: FileDescriptor) {
        let thread = Thread { [weak self] in
            while true {
                guard let client = try? TCPSocket.accept(listener) else { break }
                guard let self, self.lock.withLock({ !self.stopped && self.listener == listener }) else {
                    try? client.close()
                    break
                }
                self.lock.withLock { self.accepted += 1 }
                let pump = Thread { [weak self] in self?.pump(client) ?? { try? client.close() }() }
                pump.start()
            }
            try? listener.close()
        }
        thread.start()
    }

    private func current() -> (Fault, Int, Bool) { lock.withLock { (fault, generation, stopped) } }

    /// Counts a connection that stalls under the fault of `generation`, unless another came since.
    private func countStalled(_ generation: Int) { lock.withLock { if self.generation == generation { stalled += 1 } } }

    /// Uncounts a stalled connection that closes, if its fault is still the current one.
    private func uncountStalled(_ generation: Int) { lock.withLock { if self.generation == generation { stalled -= 1 } } }

    /// Moves bytes both ways until either side closes or a fault ends the connection.
    private func pump(_ client: FileDescriptor) {
        defer { try? client.close() }
        guard let upstream = try? TCPSocket.connect(host: upstreamHost, port: upstreamPort, timeout: .seconds(5)) else { return }
        defer { try? upstream.close() }
        var seenGeneration = -1
        var sentUp = 0
        var sentDown = 0
        // Whether this connection swallowed a request under the current fault (and is counted in
        // `stalled`, which an injection resets); with `stallRequests`, whether it carries a matching
        // request, so stays stalled.
        var swallowed = false
        var matched = false
        defer { if swallowed { uncountStalled(seenGeneration) } }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let (fault, generation, stopped) = current()
            if stopped || fault == .down { return }
            if generation != seenGeneration {
                seenGeneration = generation
                sentUp = 0
                sentDown = 0
                matched = false
                swallowed = false
            }
            let stalling = fault == .stall || matched
            var entries = [pollfd(fd: client.rawValue, events: Int16(POLLIN), revents: 0)]
            if !stalling { entries.append(pollfd(fd: upstream.rawValue, events: Int16(POLLIN), revents: 0)) }
            guard poll(&entries, nfds_t(entries.count), 20) >= 0 || errno == EINTR else { return }
            // A fault injected while this thread waited applies to what arrived meanwhile.
            if current().1 != generation { continue }
            if entries[0].revents != 0 {
                let count = Glibc.read(client.rawValue, buffer.baseAddress, buffer.count)
                if count <= 0 { return }
                if case .stallRequests(let text) = fault, !matched {
                    matched = Self.contains(UnsafeRawBufferPointer(rebasing: buffer[..<count]), Array(text.utf8))
                }
                if fault == .stall || matched {
                    if !swallowed {
                        swallowed = true
                        countStalled(generation)
                    }
                    continue  // swallowed: the request never reaches the gateway
                }
                switch fault {
                case .cutRequest(let limit):
                    let forward = min(count, max(0, limit - sentUp))
                    if forward > 0, !Self.write(upstream, buffer, forward) { return }
                    sentUp += forward
                    if sentUp >= limit { return }
                default:
                    if !Self.write(upstream, buffer, count) { return }
                }
            }
            if entries.count > 1, entries[1].revents != 0 {
                let count = Glibc.read(upstream.rawValue, buffer.baseAddress, buffer.count)
                if count <= 0 { return }
                if fault == .dropResponses { continue }  // swallowed: the sender never hears of it
                if case .cutResponse(let limit) = fault {
                    let forward = min(count, max(0, limit - sentDown))
                    if forward > 0, !Self.write(client, buffer, forward) { return }
                    sentDown += forward
                    if sentDown >= limit { return }
                } else if !Self.write(client, buffer, count) {
                    return
                }
            }
        }
    }

    private static func contains(_ bytes: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, bytes.count >= needle.count else { return needle.isEmpty }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if (1..<needle.count).allSatisfy({ bytes[start + $0] == needle[$0] }) { return true }
        }
        return false
    }

    /// Writes the first `count` bytes of `buffer` to `fd` (blocking or not), retrying `EINTR` and
    /// waiting out `EAGAIN`; whether all went. For this proxy and other test proxies.
    package static func write(_ fd: FileDescriptor, _ buffer: UnsafeMutableRawBufferPointer, _ count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let written = Glibc.write(fd.rawValue, buffer.baseAddress! + offset, count - offset)
            if written < 0, errno == EINTR { continue }
            if written < 0, errno == EAGAIN {
                // The connecting side's socket is non-blocking: wait until it takes more.
                var entry = pollfd(fd: fd.rawValue, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, 1000)
                continue
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}
