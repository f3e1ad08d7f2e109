import Glibc

/// A Unix stream socket's descriptor, owned by whoever holds it (close it once, with ``close()``).
struct Socket: Sendable {
    /// The descriptor.
    let fd: Int32

    /// Connects to the socket at `path` (blocking).
    static func connect(path: String) throws -> Socket {
        let socket = try make(path)
        let status = withAddress(path) { Glibc.connect(socket.fd, $0, $1) }
        guard status == 0 else {
            let error = SystemError.current("connect", path)
            socket.close()
            throw error
        }
        return socket
    }

    /// Listens at `path` (replacing a stale socket file there), owner-only.
    static func listen(path: String, backlog: Int32 = 1024) throws -> Socket {
        let socket = try make(path)
        unlink(path)
        guard withAddress(path, { bind(socket.fd, $0, $1) }) == 0, chmod(path, 0o600) == 0, Glibc.listen(socket.fd, backlog) == 0 else {
            let error = SystemError.current("bind/listen", path)
            socket.close()
            throw error
        }
        return socket
    }

    /// Accepts a connection, close-on-exec (and non-blocking when `nonBlocking`); nil if the call was
    /// interrupted or the peer gave up.
    func accept(nonBlocking: Bool) throws -> Socket? {
        let accepted = Glibc.accept(fd, nil, nil)
        guard accepted >= 0 else {
            if errno == EAGAIN || errno == EINTR || errno == ECONNABORTED { return nil }
            throw SystemError.current("accept")
        }
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        if nonBlocking { _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK) }
        return Socket(fd: accepted)
    }

    /// Sends what it can of `bytes`; nil if the socket would block.
    func send(_ bytes: UnsafeRawBufferPointer) throws -> Int? {
        while true {
            let count = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            if errno == EAGAIN { return nil }
            throw SystemError.current("send")
        }
    }

    /// Receives into `buffer`; 0 at end of stream, nil if the socket would block.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            if errno == EAGAIN { return nil }
            throw SystemError.current("recv")
        }
    }

    /// Sets SO_SNDBUF.
    func setSendBufferSize(_ bytes: Int32) throws {
        var value = bytes
        guard setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SystemError.current("setsockopt SO_SNDBUF")
        }
    }

    /// Closes the descriptor.
    func close() { _ = Glibc.close(fd) }

    private static func make(_ path: String) throws -> Socket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError.current("socket", path) }
        return Socket(fd: fd)
    }

    /// Calls `body` with a `sockaddr_un` for `path` and its length.
    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            errno = ENAMETOOLONG
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
