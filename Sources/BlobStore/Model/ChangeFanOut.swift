import Foundation

/// A store's change feed: numbers each change (1, 2, …) and hands it to every live `changes()`
/// subscriber and to every observer.
///
/// A value kept inside its store's locked state, so that numbering and delivery happen under the
/// same lock as the change itself: subscribers see changes in commit order. Every store kind (file,
/// in-memory, S3) keeps one.
package struct ChangeFanOut: Sendable {
    /// The last number given (0 before the first change).
    package private(set) var sequence: UInt64 = 0
    private var subscribers: [UInt64: AsyncStream<BlobChange>.Continuation] = [:]
    private var nextSubscriber: UInt64 = 0
    /// Synchronous observers, called with every change before it is acknowledged; each must be
    /// quick and must not call back into the store.
    package private(set) var observers: [@Sendable (BlobChange) -> Void] = []

    /// An empty feed.
    package init() {}

    /// Live subscribers.
    package var subscriberCount: Int { subscribers.count }

    /// Adds a subscriber; returns its number for ``remove(subscriber:)``.
    package mutating func add(_ continuation: AsyncStream<BlobChange>.Continuation) -> UInt64 {
        defer { nextSubscriber += 1 }
        subscribers[nextSubscriber] = continuation
        return nextSubscriber
    }

    /// Drops subscriber `number` (its stream was dropped).
    package mutating func remove(subscriber number: UInt64) {
        subscribers.removeValue(forKey: number)
    }

    /// Adds an observer.
    package mutating func observe(_ observer: @escaping @Sendable (BlobChange) -> Void) {
        observers.append(observer)
    }

    /// Numbers `kind` and hands it to every subscriber, not to the observers (the caller calls
    /// them, possibly outside its lock); returns the change.
    package mutating func record(_ kind: BlobChange.Kind, store: String, date: Date, reason: BlobChange.Reason = .requested) -> BlobChange {
        sequence += 1
        let change = BlobChange(sequence: sequence, store: store, kind: kind, date: date, reason: reason)
        for continuation in subscribers.values { continuation.yield(change) }
        return change
    }

    /// Numbers `kind` and hands it to every subscriber and observer.
    package mutating func publish(_ kind: BlobChange.Kind, store: String, date: Date, reason: BlobChange.Reason = .requested) {
        let change = record(kind, store: store, date: date, reason: reason)
        for observer in observers { observer(change) }
    }

    /// Removes every subscriber and returns them, for the caller to finish outside its lock (the
    /// store is going away; finishing runs their termination handlers).
    package mutating func takeSubscribers() -> [AsyncStream<BlobChange>.Continuation] {
        defer { subscribers.removeAll() }
        return Array(subscribers.values)
    }

    /// A new subscription stream: `register` adds its continuation to the feed under the store's
    /// lock and returns its number; `unregister` is called with that number when the consumer drops
    /// the stream.
    package static func stream(
        register: (AsyncStream<BlobChange>.Continuation) -> UInt64, unregister: @escaping @Sendable (UInt64) -> Void
    ) -> AsyncStream<BlobChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: BlobChange.self, bufferingPolicy: .unbounded)
        let number = register(continuation)
        continuation.onTermination = { _ in unregister(number) }
        return stream
    }
}
