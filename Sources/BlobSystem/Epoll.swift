import CBlobShim

/// An epoll instance: register descriptors once, then wait for readiness.
///
/// Each registration carries a 64-bit token that comes back with its events, so an event loop can
/// find a connection's state by index without a dictionary lookup.
public struct Epoll: Sendable {
    /// Readiness bits.
    public struct Events: OptionSet, Sendable, Hashable {
        /// The raw epoll bits.
        public let rawValue: UInt32
        /// Wraps raw epoll bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Readable (`EPOLLIN`).
        public static let readable = Events(rawValue: cblob_epollin())
        /// Writable (`EPOLLOUT`).
        public static let writable = Events(rawValue: cblob_epollout())
        /// The peer shut down its writing side (`EPOLLRDHUP`).
        public static let peerClosed = Events(rawValue: cblob_epollrdhup())
        /// Hang-up (`EPOLLHUP`).
        public static let hangUp = Events(rawValue: cblob_epollhup())
        /// Error (`EPOLLERR`).
        public static let error = Events(rawValue: cblob_epollerr())
        /// Edge-triggered (`EPOLLET`).
        public static let edgeTriggered = Events(rawValue: cblob_epollet())
    }

    /// One ready event: the readiness bits and the token given at registration.
    public typealias Event = cblob_epoll_event

    /// The epoll descriptor.
    public let descriptor: FileDescriptor

    /// Creates an epoll instance (close-on-exec).
    public init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try retryingOnInterrupt { cblob_epoll_create() })
    }

    /// Starts watching `fd` for `events`; `token` comes back with each event.
    public func add(_ fd: FileDescriptor, events: Events, token: UInt64) throws(Errno) {
        _ = try retryingOnInterrupt { cblob_epoll_ctl(descriptor.rawValue, 1, fd.rawValue, events.rawValue, token) }
    }

    /// Changes what `fd` is watched for.
    public func modify(_ fd: FileDescriptor, events: Events, token: UInt64) throws(Errno) {
        _ = try retryingOnInterrupt { cblob_epoll_ctl(descriptor.rawValue, 3, fd.rawValue, events.rawValue, token) }
    }

    /// Stops watching `fd`.
    public func remove(_ fd: FileDescriptor) throws(Errno) {
        _ = try retryingOnInterrupt { cblob_epoll_ctl(descriptor.rawValue, 2, fd.rawValue, 0, 0) }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and fills `events`; returns how many are ready.
    public func wait(into events: inout [Event], timeoutMilliseconds: Int32) throws(Errno) -> Int {
        let capacity = Int32(events.count)
        let count = events.withUnsafeMutableBufferPointer { buffer in
            cblob_epoll_wait(descriptor.rawValue, buffer.baseAddress, capacity, timeoutMilliseconds)
        }
        if count >= 0 { return Int(count) }
        let error = Errno.current
        if error == .interrupted { return 0 }
        throw error
    }
}

/// A non-blocking `eventfd`: one side signals, an event loop wakes up.
public struct EventSignal: Sendable {
    /// The eventfd descriptor (register it for `.readable`).
    public let descriptor: FileDescriptor

    /// Creates the eventfd.
    public init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try retryingOnInterrupt { cblob_eventfd() })
    }

    /// Wakes the waiting loop.
    public func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { try? descriptor.writeAll($0) }
    }

    /// Clears pending signals (call when woken).
    public func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { try? descriptor.read(into: $0) }
    }
}
