import Foundation
internal import BlobSystem

/// Fans committed changes out to every live `changes()` subscriber, numbering them in commit order.
final class ChangeBroadcaster: Sendable {
    private struct State {
        var nextSequence: UInt64 = 1
        var nextSubscriber = 0
        var subscribers: [Int: AsyncStream<BlobChange>.Continuation] = [:]
        var observers: [@Sendable (BlobChange) -> Void] = []
    }

    /// Owned here; every access holds the mutex.
    private let state = Locked(State())
    private let store: String

    init(store: String) { self.store = store }

    /// A new subscription; it ends when the consumer drops it.
    func subscribe() -> AsyncStream<BlobChange> {
        let (stream, continuation) = AsyncStream<BlobChange>.makeStream()
        let id = state.withLock { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Adds a synchronous observer, called for every change before it is acknowledged (see
    /// ``PersistentDataStore/observeChanges(_:)``).
    func observe(_ observer: @escaping @Sendable (BlobChange) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Numbers and delivers `kinds`, in order. Callers publish from one serial context (the
    /// committer), before acknowledging the changes.
    /// Each change carries its reason (a cache-mode removal's ``BlobChange/Reason``).
    func publish(_ kinds: [(BlobChange.Kind, BlobChange.Reason)]) {
        guard !kinds.isEmpty else { return }
        let now = Date()
        let (changes, observers) = state.withLock { state in
            var changes: [BlobChange] = []
            for (kind, reason) in kinds {
                let change = BlobChange(sequence: state.nextSequence, store: store, kind: kind, date: now, reason: reason)
                state.nextSequence += 1
                for continuation in state.subscribers.values { continuation.yield(change) }
                changes.append(change)
            }
            return (changes, state.observers)
        }
        for change in changes {
            for observer in observers { observer(change) }
        }
    }
}
