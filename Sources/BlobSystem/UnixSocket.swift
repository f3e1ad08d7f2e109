#if canImport(Glibc)
import Glibc
#endif
import CBlobShim

/// Who is on the other end of a Unix socket, as the kernel reports it (`SO_PEERCRED`).
package struct PeerCredentials: Hashable, Sendable {
    /// The peer's process id.
    package var processID: Int32
    /// The peer's effective user id.
    package var userID: UInt32
    /// The peer's effective group id.
    package var groupID: UInt32

    /// Creates credentials (the kernel's come from ``UnixSocket/peerCredentials(_:)``; this is for tests and policies).
    package init(processID: Int32, userID: UInt32, groupID: UInt32) {
        self.processID = processID
        self.userID = userID
        self.groupID = groupID
    }
}

/// Unix domain stream sockets: listen, connect, accept, and peer credentials.
package enum UnixSocket {
    /// The longest socket path the kernel accepts (`sun_path` is 108 bytes including the NUL).
    package static let maximumPathLength = 107

    /// Creates a socket bound to `path` and listening. The socket file gets `permissions`
    /// *before* `listen`, so no client can connect while it is more open than intended.
    package static func listen(path: String, permissions: mode_t = 0o600, backlog: Int32 = 1024) throws(Errno) -> FileDescriptor {
        let fd = try makeSocket()
        do {
            try withAddress(path) { (address, length) throws(Errno) in
                _ = try retryingOnInterrupt { bind(fd.rawValue, address, length) }
            }
            _ = try retryingOnInterrupt { chmod(path, permissions) }
            _ = try retryingOnInterrupt { Glibc.listen(fd.rawValue, backlog) }
            return fd
        } catch {
            try? fd.close()
            throw error
        }
    }

    /// Connects to the socket at `path` (blocking).
    package static func connect(path: String) throws(Errno) -> FileDescriptor {
        let fd = try makeSocket()
        do {
            try withAddress(path) { (address, length) throws(Errno) in
                _ = try retryingOnInterrupt { Glibc.connect(fd.rawValue, address, length) }
            }
            return fd
        } catch {
            try? fd.close()
            throw error
        }
    }

    /// Accepts one connection (close-on-exec); `nil` when a non-blocking listener has none waiting.
    package static func accept(_ listener: FileDescriptor, nonBlocking: Bool) throws(Errno) -> FileDescriptor? {
        while true {
            let fd = cblob_accept(listener.rawValue, nonBlocking ? 1 : 0)
            if fd >= 0 { return FileDescriptor(rawValue: fd) }
            let error = Errno.current
            switch error.rawValue {
            case EINTR, ECONNABORTED: continue
            case EAGAIN: return nil
            default: throw error
            }
        }
    }

    /// The credentials of the process at the other end of `socket`.
    package static func peerCredentials(_ socket: FileDescriptor) throws(Errno) -> PeerCredentials {
        var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        _ = try retryingOnInterrupt { cblob_peer_credentials(socket.rawValue, &pid, &uid, &gid) }
        return PeerCredentials(processID: pid, userID: uid, groupID: gid)
    }

    private static func makeSocket() throws(Errno) -> FileDescriptor {
        let fd = try retryingOnInterrupt { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        return FileDescriptor(rawValue: fd)
    }

    private static func withAddress<R>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Errno) -> R
    ) throws(Errno) -> R {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumPathLength, !bytes.contains(0) else { throw Errno(rawValue: ENAMETOOLONG) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        var result: Result<R, Errno>?
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                do throws(Errno) { result = .success(try body(sockaddrPointer, length)) } catch { result = .failure(error) }
            }
        }
        return try result!.get()
    }
}

extension FileDescriptor {
    /// Sends bytes on a socket without raising `SIGPIPE`; returns the count sent, or `nil` if it would block.
    package func send(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int? {
        while true {
            let n = Glibc.send(rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return n }
            let error = Errno.current
            if error == .interrupted { continue }
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    /// Receives bytes; returns the count (0 at end of stream), or `nil` if it would block.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int? {
        while true {
            let n = recv(rawValue, buffer.baseAddress, buffer.count, 0)
            if n >= 0 { return n }
            let error = Errno.current
            if error == .interrupted { continue }
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    /// `sendfile(2)` from `file` at `offset`; returns bytes sent, or `nil` if the socket would block.
    package func sendFile(from file: FileDescriptor, offset: inout Int64, count: Int) throws(Errno) -> Int? {
        while true {
            var position = off_t(offset)
            let n = sendfile(rawValue, file.rawValue, &position, count)
            if n >= 0 {
                offset = Int64(position)
                return n
            }
            let error = Errno.current
            if error == .interrupted { continue }
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    /// Asks for a socket send buffer of `bytes` (`SO_SNDBUF`). Linux doubles the value for its
    /// bookkeeping and caps it at twice `net.core.wmem_max`; ``sendBufferSize()`` reads back what it set.
    package func setSendBufferSize(_ bytes: Int32) throws(Errno) {
        var value = bytes
        _ = try retryingOnInterrupt { setsockopt(rawValue, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// The socket's send buffer size (`SO_SNDBUF`, as the kernel accounts it).
    package func sendBufferSize() throws(Errno) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try retryingOnInterrupt { getsockopt(rawValue, SOL_SOCKET, SO_SNDBUF, &value, &length) }
        return value
    }

    /// Sets or clears `O_NONBLOCK`.
    package func setNonBlocking(_ enabled: Bool) throws(Errno) {
        let flags = try retryingOnInterrupt { fcntl(rawValue, F_GETFL) }
        let updated = enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        _ = try retryingOnInterrupt { fcntl(rawValue, F_SETFL, updated) }
    }
}
