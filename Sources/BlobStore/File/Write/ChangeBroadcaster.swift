import Foundation
internal import BlobSystem

/// Fans committed changes out to every live `changes()` subscriber, numbering them in commit order.
final class ChangeBroadcaster: Sendable {
    /// Owned here; every access holds the mutex.
    private let feed = Locked(ChangeFanOut())
    private let store: String

    init(store: String) { self.store = store }

    /// A new subscription; it ends when the consumer drops it.
    func subscribe() -> AsyncStream<BlobChange> {
        ChangeFanOut.stream { continuation in
            feed.withLock { $0.add(continuation) }
        } unregister: { [weak self] number in
            self?.feed.withLock { $0.remove(subscriber: number) }
        }
    }

    /// Adds a synchronous observer, called for every change before it is acknowledged (see
    /// ``PersistentDataStore/observeChanges(_:)``).
    func observe(_ observer: @escaping @Sendable (BlobChange) -> Void) {
        feed.withLock { $0.observe(observer) }
    }

    /// Numbers and delivers `kinds`, in order. Callers publish from one serial context (the
    /// committer), before acknowledging the changes.
    /// Each change carries its reason (a cache-mode removal's ``BlobChange/Reason``).
    func publish(_ kinds: [(BlobChange.Kind, BlobChange.Reason)]) {
        guard !kinds.isEmpty else { return }
        let now = Date()
        // Observers are called outside the mutex, so that one may subscribe or observe.
        let (changes, observers) = feed.withLock { feed in
            (kinds.map { feed.record($0.0, store: store, date: now, reason: $0.1) }, feed.observers)
        }
        for change in changes {
            for observer in observers { observer(change) }
        }
    }
}
