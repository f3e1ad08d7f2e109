import BlobStore
import BlobSystem
import Foundation

/// The daemon's change-event log: every committed change of every store, numbered, kept in a bounded
/// ring so a client reconnecting with `Last-Event-ID` gets what it missed, and fanned out to
/// subscribers with bounded queues so a slow reader is dropped rather than allowed to grow memory.
///
/// Ids increase by one per event and start at the daemon's start time in microseconds since 1970,
/// so ids of a restarted daemon are above those of the one before: an old `Last-Event-ID` is
/// recognised as too old (a `gap`) instead of being mistaken for a recent one.
///
/// Owns its state behind one lock; `append` is called by the store observers, `subscribe`/`take`
/// by event-loop threads.
final class EventLog: Sendable {
    private struct State {
        var nextID: UInt64
        /// The most recent events, oldest first (at most `capacity`).
        var recent: [LoggedEvent] = []
        var recentStart = 0
        var subscribers: [ObjectIdentifier: EventSubscription] = [:]
    }

    /// One numbered event, and its Server-Sent Events frame once some subscriber needed it.
    ///
    /// Encoded lazily: most changes are never streamed (no subscriber, or none of their store), and
    /// encoding every one cost an eighth of a PUT's instructions in blobd.
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

    /// How many events are kept for reconnecting clients.
    let capacity: Int
    /// How many undelivered frames a subscriber may have before it is dropped.
    let subscriberLimit: Int
    private let state: Locked<State>

    init(capacity: Int = 10_000, subscriberLimit: Int = 4_096, firstID: UInt64 = UInt64(Date().timeIntervalSince1970 * 1_000_000)) {
        self.capacity = max(1, capacity)
        self.subscriberLimit = max(1, subscriberLimit)
        state = Locked(State(nextID: firstID))
    }

    /// The id the next event will get.
    var nextID: UInt64 { state.withLock { $0.nextID } }

    /// Numbers `change`, keeps it, and queues it for every subscriber whose store filter matches.
    func append(_ change: BlobChange) {
        var dropped: [EventSubscription] = []
        state.withLock { state in
            var event = LoggedEvent(id: state.nextID, change: change, frame: nil)
            state.nextID += 1
            if state.recent.count - state.recentStart >= capacity { state.recentStart += 1 }
            if state.recentStart > capacity {
                state.recent.removeFirst(state.recentStart)
                state.recentStart = 0
            }
            for subscriber in state.subscribers.values where subscriber.store == nil || subscriber.store == change.store {
                if !subscriber.enqueue(event.encodedFrame(), limit: subscriberLimit) { dropped.append(subscriber) }
            }
            state.recent.append(event)
            for subscriber in dropped { state.subscribers.removeValue(forKey: ObjectIdentifier(subscriber)) }
        }
        for subscriber in dropped { subscriber.wake() }
    }

    /// A new subscription, primed with the events after `lastEventID` (when given). If some of those
    /// have already left the log, the first frame is a `gap` event saying which ids were lost.
    func subscribe(store: String?, after lastEventID: UInt64?, wake: @escaping @Sendable () -> Void) -> EventSubscription {
        let subscription = EventSubscription(store: store, wake: wake)
        state.withLock { state in
            if let last = lastEventID {
                let oldest = state.recent[state.recentStart...].first?.id ?? state.nextID
                if last + 1 < oldest {
                    _ = subscription.enqueue(SSEFrame.gap(lastEventID: last, firstAvailable: oldest, id: oldest > 0 ? oldest - 1 : 0), limit: .max)
                }
                for index in state.recent.indices.dropFirst(state.recentStart)
                where state.recent[index].id > last && (store == nil || state.recent[index].store == store) {
                    _ = subscription.enqueue(state.recent[index].encodedFrame(), limit: .max)
                }
            }
            state.subscribers[ObjectIdentifier(subscription)] = subscription
        }
        return subscription
    }

    /// Stops delivering to `subscription`.
    func unsubscribe(_ subscription: EventSubscription) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: ObjectIdentifier(subscription)) }
    }

    /// Live subscriber count (for metrics and tests).
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}

/// One client's view of the event log: frames waiting to be written to its connection.
final class EventSubscription: Sendable {
    private struct State {
        var pending: [[UInt8]] = []
        var dropped = false
    }

    /// Only events of this store, or all when `nil`.
    let store: String?
    private let state = Locked(State())
    private let wakeHandler: @Sendable () -> Void

    init(store: String?, wake: @escaping @Sendable () -> Void) {
        self.store = store
        self.wakeHandler = wake
    }

    /// Queues a frame; returns `false` (and marks the subscription dropped) when `limit` frames are already waiting.
    func enqueue(_ frame: [UInt8], limit: Int) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.dropped else { return false }
            if state.pending.count >= limit {
                state.dropped = true
                state.pending = []
                return false
            }
            state.pending.append(frame)
            return true
        }
        if accepted { wakeHandler() }
        return accepted
    }

    /// Takes every waiting frame; `dropped` tells the connection to close because the reader fell behind.
    func take() -> (frames: [[UInt8]], dropped: Bool) {
        state.withLock { state in
            defer { state.pending = [] }
            return (state.pending, state.dropped)
        }
    }

    func wake() { wakeHandler() }
}
