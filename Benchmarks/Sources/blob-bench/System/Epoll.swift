import CBenchShim
import Glibc

/// An epoll instance (level-triggered unless ``Events/edgeTriggered`` is asked for).
struct Epoll: Sendable {
    /// What a descriptor is watched for, and what a ready event reports.
    struct Events: OptionSet, Sendable {
        let rawValue: UInt32
        static let readable = Events(rawValue: EPOLLIN.rawValue)
        static let writable = Events(rawValue: EPOLLOUT.rawValue)
        static let peerClosed = Events(rawValue: EPOLLRDHUP.rawValue)
        static let hangUp = Events(rawValue: EPOLLHUP.rawValue)
        static let error = Events(rawValue: EPOLLERR.rawValue)
        static let edgeTriggered = Events(rawValue: EPOLLET.rawValue)
    }

    /// One ready event: its bits (`events`) and the token it was registered with (``token``). The
    /// kernel's own struct, so that waiting copies nothing (the load generator's time is taken from
    /// the server it measures).
    typealias Event = epoll_event

    /// The epoll descriptor.
    let fd: Int32

    /// Creates an epoll instance (close-on-exec).
    init() throws {
        fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw SystemError.current("epoll_create1") }
    }

    /// Starts watching `descriptor` for `events`; `token` comes back with each event.
    func add(_ descriptor: Int32, events: Events, token: UInt64) throws {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        guard epoll_ctl(fd, EPOLL_CTL_ADD, descriptor, &event) == 0 else { throw SystemError.current("epoll_ctl") }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and fills `events`; returns how many are ready
    /// (0 when interrupted by a signal).
    func wait(into events: inout [Event], timeoutMilliseconds: Int32) throws -> Int {
        let capacity = Int32(events.count)
        let count = events.withUnsafeMutableBufferPointer { epoll_wait(fd, $0.baseAddress, capacity, timeoutMilliseconds) }
        if count < 0 {
            if errno == EINTR { return 0 }
            throw SystemError.current("epoll_wait")
        }
        return Int(count)
    }

    /// Closes the epoll descriptor.
    func close() { _ = Glibc.close(fd) }
}

extension epoll_event {
    /// The token the descriptor was registered with (``Epoll/add(_:events:token:)``).
    var token: UInt64 { data.u64 }
}
