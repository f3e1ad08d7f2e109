import Foundation
import BlobSystem

/// Fans committed changes out to every live `changes()` subscriber, numbering them in commit order.
final class ChangeBroadcaster: Sendable {
    private struct State {
        var nextSequence: UInt64 = 1
        var nextSubscriber = 0
        var subscribers: [Int: AsyncStream<BlobChange>.Continuation] = [:]
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

    /// Numbers and delivers `kinds`, in order. Callers publish from one serial context.
    func publish(_ kinds: [BlobChange.Kind]) {
        guard !kinds.isEmpty else { return }
        let now = Date()
        state.withLock { state in
            for kind in kinds {
                let change = BlobChange(sequence: state.nextSequence, store: store, kind: kind, date: now)
                state.nextSequence += 1
                for continuation in state.subscribers.values { continuation.yield(change) }
            }
        }
    }
}
