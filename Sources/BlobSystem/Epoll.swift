import CBlobShim

/// An epoll instance: register descriptors once, then wait for readiness.
///
/// Each registration carries a 64-bit token that comes back with its events, so an event loop can
/// find a connection's state by index without a dictionary lookup.
package struct Epoll: Sendable {
    /// Readiness bits.
    package struct Events: OptionSet, Sendable, Hashable {
        /// The raw epoll bits.
        package let rawValue: UInt32
        /// Wraps raw epoll bits.
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Readable (`EPOLLIN`).
        package static let readable = Events(rawValue: cblob_epollin())
        /// Writable (`EPOLLOUT`).
        package static let writable = Events(rawValue: cblob_epollout())
        /// The peer shut down its writing side (`EPOLLRDHUP`).
        package static let peerClosed = Events(rawValue: cblob_epollrdhup())
        /// Hang-up (`EPOLLHUP`).
        package static let hangUp = Events(rawValue: cblob_epollhup())
        /// Error (`EPOLLERR`).
        package static let error = Events(rawValue: cblob_epollerr())
        /// Edge-triggered (`EPOLLET`).
        package static let edgeTriggered = Events(rawValue: cblob_epollet())
    }

    /// One ready event: the readiness bits and the token given at registration.
    package typealias Event = cblob_epoll_event

    /// The epoll descriptor.
    package let descriptor: FileDescriptor

    /// Creates an epoll instance (close-on-exec).
    package init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try retryingOnInterrupt { cblob_epoll_create() })
    }

    /// Starts watching `fd` for `events`; `token` comes back with each event.
    package func add(_ fd: FileDescriptor, events: Events, token: UInt64) throws(Errno) {
        _ = try retryingOnInterrupt { cblob_epoll_ctl(descriptor.rawValue, 1, fd.rawValue, events.rawValue, token) }
    }

    /// Changes what `fd` is watched for.
    package func modify(_ fd: FileDescriptor, events: Events, token: UInt64) throws(Errno) {
        _ = try retryingOnInterrupt { cblob_epoll_ctl(descriptor.rawValue, 3, fd.rawValue, events.rawValue, token) }
    }

    /// Stops watching `fd`.
    package func remove(_ fd: FileDescriptor) throws(Errno) {
        _ = try retryingOnInterrupt { cblob_epoll_ctl(descriptor.rawValue, 2, fd.rawValue, 0, 0) }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and fills `events`; returns how many are ready.
    package func wait(into events: inout [Event], timeoutMilliseconds: Int32) throws(Errno) -> Int {
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
package struct EventSignal: Sendable {
    /// The eventfd descriptor (register it for `.readable`).
    package let descriptor: FileDescriptor

    /// Creates the eventfd.
    package init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try retryingOnInterrupt { cblob_eventfd() })
    }

    /// Wakes the waiting loop.
    package func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { try? descriptor.writeAll($0) }
    }

    /// Clears pending signals (call when woken).
    package func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { try? descriptor.read(into: $0) }
    }
}
