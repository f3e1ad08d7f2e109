#if canImport(Glibc)
import Glibc
#endif

/// Why a TCP socket operation failed: the system's errno, a name that does not resolve, or a wait
/// that ran out of time.
package enum TCPSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `getaddrinfo` could not resolve `host`; `reason` is its `gai_strerror` text.
    case unresolvable(host: String, reason: String)
    /// A system call failed.
    case system(Errno)
    /// Nothing happened within `timeout` (no connection, no byte accepted, no byte received).
    case timedOut(Duration)

    /// E.g. `ECONNREFUSED (Connection refused)`, `timed out after 5 s`.
    package var description: String {
        switch self {
        case .unresolvable(let host, let reason): return "cannot resolve \(host): \(reason)"
        case .system(let errno): return errno.description
        case .timedOut(let timeout): return "timed out after \(timeout.secondsText)"
        }
    }
}

/// One resolved TCP address (IPv4 or IPv6) and port.
package struct TCPAddress: Hashable, Sendable, CustomStringConvertible {
    /// The `sockaddr_in` or `sockaddr_in6` bytes.
    let bytes: [UInt8]
    /// `AF_INET` or `AF_INET6`.
    package let family: Int32

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
        family = Int32(address.pointee.sa_family)
    }

    /// The port.
    package var port: UInt16 {
        bytes.withUnsafeBytes { raw in
            family == AF_INET6
                ? UInt16(bigEndian: raw.loadUnaligned(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.loadUnaligned(as: sockaddr_in.self).sin_port)
        }
    }

    /// `127.0.0.1:7480` or `[::1]:7480`.
    package var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            if family == AF_INET6 {
                var address = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            } else {
                var address = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            }
        }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        bytes.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }
}

/// TCP stream sockets: resolve, connect with a timeout, listen, accept, and waits with timeouts.
///
/// Connected sockets are non-blocking, close-on-exec, with `TCP_NODELAY` (a request's head and body
/// go out as written rather than waiting for the peer's delayed ACK). Every wait is a `poll` with a
/// deadline, and ``wait(_:for:until:)`` is the one place an interrupted wait (`EINTR`) is resumed
/// with the time that is left; the send and receive calls themselves retry `EINTR` in
/// ``FileDescriptor/send(_:)`` and ``FileDescriptor/receive(into:)``.
package enum TCPSocket {
    /// What to wait for on a socket.
    package enum Readiness: Sendable {
        /// Bytes to read, end of stream, or an error.
        case readable
        /// Room to write, a finished connect, or an error.
        case writable
    }

    /// The addresses of `host` (a name, `localhost`, or an IPv4 or IPv6 literal, brackets allowed)
    /// with `port`, in `getaddrinfo`'s order.
    package static func resolve(host: String, port: UInt16) throws(TCPSocketError) -> [TCPAddress] {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &list)
        guard status == 0 else {
            if status == EAI_SYSTEM { throw .system(.current) }
            throw .unresolvable(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var addresses: [TCPAddress] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr, current.pointee.ai_family == AF_INET || current.pointee.ai_family == AF_INET6 {
                let found = TCPAddress(address, length: current.pointee.ai_addrlen)
                if !addresses.contains(found) { addresses.append(found) }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .unresolvable(host: host, reason: "no IPv4 or IPv6 address") }
        return addresses
    }

    /// Connects to `host`:`port`, trying each resolved address in turn until one answers, all
    /// within `timeout`. Returns a non-blocking socket with `TCP_NODELAY`. Throws the last address's
    /// failure, or ``TCPSocketError/timedOut(_:)``.
    package static func connect(host: String, port: UInt16, timeout: Duration) throws(TCPSocketError) -> FileDescriptor {
        let deadline = ContinuousClock.now + timeout
        let addresses = try resolve(host: host, port: port)
        var lastError = TCPSocketError.timedOut(timeout)
        for address in addresses {
            do {
                return try connect(to: address, until: deadline, timeout: timeout)
            } catch {
                lastError = error
                if case .timedOut = error { break }
            }
        }
        throw lastError
    }

    /// Connects to one address, waiting until `deadline` (`timeout` is what a timeout error reports).
    package static func connect(to address: TCPAddress, until deadline: ContinuousClock.Instant, timeout: Duration) throws(TCPSocketError) -> FileDescriptor {
        let raw = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard raw >= 0 else { throw .system(.current) }
        let fd = FileDescriptor(rawValue: raw)
        do throws(TCPSocketError) {
            let result = address.withSocketAddress { Glibc.connect(raw, $0, $1) }
            if result != 0 {
                // A non-blocking connect goes on in the background after EINTR too.
                let error = Errno.current
                guard error.rawValue == EINPROGRESS || error == .interrupted else { throw TCPSocketError.system(error) }
                guard try wait(fd, for: .writable, until: deadline) else { throw TCPSocketError.timedOut(timeout) }
                var pending: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(raw, SOL_SOCKET, SO_ERROR, &pending, &length) == 0 else { throw TCPSocketError.system(.current) }
                if pending != 0 { throw TCPSocketError.system(Errno(rawValue: pending)) }
            }
            try fd.setNoDelay()
            return fd
        } catch {
            try? fd.close()
            throw error
        }
    }

    /// A blocking listener on `host`:`port` (port 0: the kernel picks one; see ``localAddress(_:)``),
    /// with `SO_REUSEADDR`, close-on-exec.
    package static func listen(host: String = "127.0.0.1", port: UInt16 = 0, backlog: Int32 = 128) throws(TCPSocketError) -> FileDescriptor {
        guard let address = try resolve(host: host, port: port).first else { throw .unresolvable(host: host, reason: "no address") }
        let raw = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw .system(.current) }
        let fd = FileDescriptor(rawValue: raw)
        do throws(Errno) {
            var one: Int32 = 1
            _ = try retryingOnInterrupt { setsockopt(raw, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
            _ = try retryingOnInterrupt { address.withSocketAddress { bind(raw, $0, $1) } }
            _ = try retryingOnInterrupt { Glibc.listen(raw, backlog) }
            return fd
        } catch {
            try? fd.close()
            throw .system(error)
        }
    }

    /// Accepts one connection from `listener`, blocking; the socket is blocking, with `TCP_NODELAY`.
    package static func accept(_ listener: FileDescriptor) throws(TCPSocketError) -> FileDescriptor {
        do throws(Errno) {
            // UnixSocket.accept is accept4(2), which serves any stream socket.
            guard let fd = try UnixSocket.accept(listener, nonBlocking: false) else { throw Errno.wouldBlock }
            try? fd.setNoDelay()
            return fd
        } catch {
            throw .system(error)
        }
    }

    /// The address a socket is bound to (a listener's port after ``listen(host:port:backlog:)`` with 0).
    package static func localAddress(_ socket: FileDescriptor) throws(TCPSocketError) -> TCPAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket.rawValue, $0, &length) }
        }
        guard result == 0 else { throw .system(.current) }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { TCPAddress($0, length: length) }
        }
    }

    /// Waits until `socket` is ready or `deadline` passes (`nil`: forever); `false` on timeout.
    /// An error or hang-up on the socket counts as ready: the next call on it reports it.
    ///
    /// The one place a wait interrupted by a signal is resumed, with the time left.
    package static func wait(_ socket: FileDescriptor, for readiness: Readiness, until deadline: ContinuousClock.Instant?) throws(TCPSocketError) -> Bool {
        let events = Int16(readiness == .readable ? POLLIN : POLLOUT)
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = deadline - ContinuousClock.now
                if left <= .zero {
                    milliseconds = 0
                } else {
                    let (seconds, attoseconds) = left.components
                    // Rounded up, so a wait never ends a hair before its deadline and spins.
                    milliseconds = Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
                }
            }
            var entry = pollfd(fd: socket.rawValue, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 {
                if let deadline, ContinuousClock.now < deadline { continue }
                return false
            }
            let error = Errno.current
            if error != .interrupted { throw .system(error) }
        }
    }
}

extension FileDescriptor {
    /// Asks the kernel to acknowledge what arrives next at once (`TCP_QUICKACK`, Linux), best effort.
    ///
    /// A server that writes a response head and body in two writes with Nagle's algorithm on holds
    /// the second until the first is acknowledged, and a client's delayed ACK waits up to 40 ms:
    /// every small response would then take that long. The flag is not sticky (the kernel clears it
    /// as it goes), so a client sets it before each receive.
    package func requestQuickAcknowledgement() {
        #if os(Linux)
        var one: Int32 = 1
        _ = setsockopt(rawValue, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Turns off Nagle's algorithm (`TCP_NODELAY`).
    package func setNoDelay() throws(TCPSocketError) {
        var one: Int32 = 1
        guard setsockopt(rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .system(.current)
        }
    }

    /// Sends every byte of `bytes` on a non-blocking socket, waiting at most `timeout` (`nil`:
    /// forever) each time the peer accepts nothing more.
    package func sendAll(_ bytes: UnsafeRawBufferPointer, timeout: Duration?) throws(TCPSocketError) {
        var offset = 0
        while offset < bytes.count {
            let sent: Int?
            do { sent = try send(UnsafeRawBufferPointer(rebasing: bytes[offset...])) } catch { throw .system(error) }
            if let sent {
                offset += sent
            } else if try !TCPSocket.wait(self, for: .writable, until: timeout.map { ContinuousClock.now + $0 }) {
                throw .timedOut(timeout ?? .zero)
            }
        }
    }

    /// Receives some bytes on a non-blocking socket, waiting at most `timeout` (`nil`: forever) for
    /// the first; returns how many (0 at end of stream).
    package func receive(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration?) throws(TCPSocketError) -> Int {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            let count: Int?
            do { count = try receive(into: buffer) } catch { throw .system(error) }
            if let count { return count }
            if try !TCPSocket.wait(self, for: .readable, until: deadline) { throw .timedOut(timeout ?? .zero) }
        }
    }
}

extension Duration {
    /// `5 s`, `0.25 s`: for messages.
    package var secondsText: String {
        let (seconds, attoseconds) = components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        if milliseconds == 0 { return "\(seconds) s" }
        var fraction = String(milliseconds)
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction) s"
    }
}
