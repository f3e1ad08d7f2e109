import BlobStore
import BlobSystem
import Foundation

/// The daemon's change-event log: every committed change of every store, numbered, kept in a bounded
/// ring from which every subscriber reads at its own pace, so a client reconnecting with
/// `Last-Event-ID` gets what it missed, and a slow reader costs no memory of its own.
///
/// A subscriber is a position in the ring (the id of the next event to consider), not a queue: its
/// connection takes frames only when its socket has taken the previous ones (``take(_:into:limit:)``).
/// One that falls so far behind that an event it has not been given leaves the ring is dropped
/// (its connection closes; the client can reconnect and is told about the gap).
///
/// Ids increase by one per event and start at the daemon's start time in microseconds since 1970,
/// so ids of a restarted daemon are above those of the one before: an old `Last-Event-ID` is
/// recognised as too old (a `gap`) instead of being mistaken for a recent one.
///
/// Owns its state behind one lock; `append` is called by the store observers, the rest by
/// event-loop threads. Wake-ups are called outside the lock.
final class EventLog: Sendable {
    private struct Subscriber {
        let store: String?
        let wake: @Sendable () -> Void
        /// The id of the next event to consider for it: all before were given to it, or were of other stores.
        var next: UInt64
        /// A `gap` frame to send before anything else.
        var gap: [UInt8]?
        /// It has taken everything there was and waits to be woken by a new event of its store.
        var waiting = false

        func wants(_ store: String) -> Bool { self.store == nil || self.store == store }
    }

    private struct State {
        var nextID: UInt64
        /// The most recent events, oldest first (at most `capacity`, from `recentStart`).
        var recent: [LoggedEvent] = []
        var recentStart = 0
        var subscribers: [ObjectIdentifier: Subscriber] = [:]

        /// The id of the oldest retained event, or the next id when none is retained.
        var oldestID: UInt64 { recentStart < recent.count ? recent[recentStart].id : nextID }
    }

    /// One numbered event, and its Server-Sent Events frame once some subscriber needed it.
    ///
    /// Encoded lazily: most changes are never streamed (no subscriber, or none of their store), and
    /// encoding every one is a visible part of a PUT's work (`Benchmarks/scripts/instructions put`).
    struct LoggedEvent: Sendable {
        var id: UInt64
        var change: BlobChange
        var frame: [UInt8]?

        var store: String { change.store }

        /// The frame, encoding it (and keeping it for later subscribers) the first time.
        mutating func encodedFrame() -> [UInt8] {
            if let frame { return frame }
            let encoded = SSEFrame.encode(change, id: id)
            frame = encoded
            return encoded
        }
    }

    /// What ``take(_:into:limit:)`` did.
    enum Take: Equatable {
        /// Frames were appended.
        case frames
        /// Nothing new: the subscriber waits for its wake-up.
        case nothing
        /// The subscriber fell too far behind (or was removed): close its connection.
        case dropped
    }

    /// How many events are kept, for reconnecting clients and for subscribers that read slowly.
    let capacity: Int
    private let state: Locked<State>

    init(capacity: Int = 10_000, firstID: UInt64 = UInt64(Date().timeIntervalSince1970 * 1_000_000)) {
        self.capacity = max(1, capacity)
        state = Locked(State(nextID: firstID))
    }

    /// The id the next event will get.
    var nextID: UInt64 { state.withLock { $0.nextID } }

    /// Numbers `change` and keeps it; wakes the waiting subscribers of its store, and drops those that
    /// had not been given the event it pushes out of the ring.
    func append(_ change: BlobChange) {
        var wakes: [@Sendable () -> Void] = []
        state.withLock { state in
            if state.recent.count - state.recentStart >= capacity {
                let evicted = state.recent[state.recentStart]
                state.recentStart += 1
                for (key, subscriber) in state.subscribers where subscriber.next <= evicted.id && subscriber.wants(evicted.store) {
                    state.subscribers[key] = nil
                    wakes.append(subscriber.wake)
                }
            }
            if state.recentStart > capacity {
                state.recent.removeFirst(state.recentStart)
                state.recentStart = 0
            }
            state.recent.append(LoggedEvent(id: state.nextID, change: change, frame: nil))
            state.nextID += 1
            for index in state.subscribers.values.indices where state.subscribers.values[index].waiting {
                guard state.subscribers.values[index].wants(change.store) else { continue }
                state.subscribers.values[index].waiting = false
                wakes.append(state.subscribers.values[index].wake)
            }
        }
        for wake in wakes { wake() }
    }

    /// A new subscription, positioned after `lastEventID` when given (else at the next event). If
    /// `lastEventID` is older than every retained event, or is not an id this log has issued, its
    /// first frame is a `gap` event saying which ids were lost. `wake` is called (on any thread)
    /// when a subscription that took everything has new events, or when it is dropped.
    func subscribe(store: String?, after lastEventID: UInt64?, wake: @escaping @Sendable () -> Void) -> EventSubscription {
        let subscription = EventSubscription(log: self)
        state.withLock { state in
            var subscriber = Subscriber(store: store, wake: wake, next: state.nextID)
            if let last = lastEventID {
                let oldest = state.oldestID
                if last < oldest - min(oldest, 1) || last >= state.nextID {
                    subscriber.gap = SSEFrame.gap(lastEventID: last, firstAvailable: oldest, id: oldest > 0 ? oldest - 1 : 0)
                    subscriber.next = oldest
                } else {
                    subscriber.next = last + 1
                }
            }
            state.subscribers[ObjectIdentifier(subscription)] = subscriber
        }
        return subscription
    }

    /// Appends the subscription's next frames to `out` while `out` holds fewer than `limit` bytes
    /// (so at least one frame when there is one), and moves it past them.
    func take(_ subscription: EventSubscription, into out: inout [UInt8], limit: Int) -> Take {
        state.withLock { state in
            let key = ObjectIdentifier(subscription)
            guard var subscriber = state.subscribers[key] else { return .dropped }
            var took = false
            if let gap = subscriber.gap {
                out += gap
                subscriber.gap = nil
                took = true
            }
            // Events it skipped that left the ring were of other stores: `append` drops it otherwise.
            let oldest = state.oldestID
            if subscriber.next < oldest { subscriber.next = oldest }
            var index = state.recentStart + Int(subscriber.next - oldest)
            while index < state.recent.count && out.count < limit {
                if subscriber.wants(state.recent[index].store) {
                    out += state.recent[index].encodedFrame()
                    took = true
                }
                subscriber.next = state.recent[index].id + 1
                index += 1
            }
            subscriber.waiting = index >= state.recent.count
            state.subscribers[key] = subscriber
            return took ? .frames : .nothing
        }
    }

    /// Whether `subscription` was dropped for falling behind (or removed).
    func isDropped(_ subscription: EventSubscription) -> Bool {
        state.withLock { $0.subscribers[ObjectIdentifier(subscription)] == nil }
    }

    /// Stops delivering to `subscription`.
    func unsubscribe(_ subscription: EventSubscription) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: ObjectIdentifier(subscription)) }
    }

    /// Live subscriber count (for metrics and tests).
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}

/// One client's place in the event log (its state lives in the log, under the log's lock).
final class EventSubscription: Sendable {
    private let log: EventLog

    fileprivate init(log: EventLog) { self.log = log }

    /// See ``EventLog/take(_:into:limit:)``.
    func take(into out: inout [UInt8], limit: Int) -> EventLog.Take { log.take(self, into: &out, limit: limit) }

    /// Whether the log dropped this subscription because its reader fell too far behind.
    var isDropped: Bool { log.isDropped(self) }
}
