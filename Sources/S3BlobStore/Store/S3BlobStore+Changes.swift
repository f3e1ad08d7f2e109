public import BlobStore
import Foundation

extension S3BlobStore {
    /// Changes from now on: this instance's own committed puts and removals (numbered per store and
    /// process, in the order they committed here), and the changes of other fleet members passed to
    /// ``receiveRemoteChange(_:)``. Changes other processes make to the bucket reach it only that way.
    public func changes() -> AsyncStream<BlobChange> {
        ChangeFanOut.stream { continuation in
            state.withLock { $0.changes.add(continuation) }
        } unregister: { [weak self] number in
            self?.state.withLock { $0.changes.remove(subscriber: number) }
        }
    }

    /// Calls `observer` with every change from now on, in the order they are published here, before
    /// the change is acknowledged to its writer. It must be quick and must not call back into the store.
    package func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) {
        state.withLock { $0.changes.observe(observer) }
    }
}

extension S3BlobStore: S3RemoteChangeReceiving {
    /// Publishes another fleet member's change. An echo of this instance's own change (an object it
    /// wrote with that ETag, an identifier it removed) is dropped: its observers had it when it was
    /// made. A stored object is read with HEAD for its metadata (a foreign, expired or already
    /// replaced object publishes nothing). Blocking.
    package func receiveRemoteChange(_ change: S3RemoteChange) {
        switch change {
        case .stored(let identifier, let objectETag):
            let own = S3StoreState.OwnWrite(identifier: Array(identifier.utf8), objectETag: objectETag)
            let isEcho = state.withLock { state -> Bool in
                guard let pending = state.ownWrites[own] else { return false }
                state.ownWrites[own] = pending > 1 ? pending - 1 : nil
                return true
            }
            guard !isEcho, let key = try? key(for: identifier),
                let object = try? headObject(key: key, identifier: identifier), object.objectETag == objectETag,
                let metadata = object.live(at: now())
            else { return }
            state.withLock { state in
                // Checked again: this instance's PUT may have returned during the HEAD. Whichever of the
                // two comes second publishes nothing.
                if let pending = state.ownWrites[own] {
                    state.ownWrites[own] = pending > 1 ? pending - 1 : nil
                    return
                }
                state.echoedWrites[own] = (state.echoedWrites[own] ?? 0) + 1
                state.publish(.put(metadata), store: name, date: now())
            }
        case .removed(let identifier):
            let bytes = Array(identifier.utf8)
            let isEcho = state.withLock { state -> Bool in
                guard let pending = state.ownRemovals[bytes] else { return false }
                state.ownRemovals[bytes] = pending > 1 ? pending - 1 : nil
                return true
            }
            guard !isEcho else { return }
            forget(identifier)
            // The gateway delivers events concurrently, so a removal may come after the put that
            // followed it: a blob that is there again is not reported removed.
            if let key = try? key(for: identifier), let object = try? headObject(key: key, identifier: identifier), object.live(at: now()) != nil {
                return
            }
            state.withLock { $0.publish(.removed(identifier: identifier), store: name, date: now()) }
        }
    }

    /// Records that this instance deleted `identifier`'s object, so the bucket's echo is dropped.
    func recordOwnRemoval(_ identifier: String) {
        let bytes = Array(identifier.utf8)
        state.withLock { $0.ownRemovals[bytes] = ($0.ownRemovals[bytes] ?? 0) + 1 }
        forget(identifier)
    }
}
