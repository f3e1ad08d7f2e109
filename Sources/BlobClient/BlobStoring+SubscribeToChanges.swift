import BlobStore
internal import BlobSystem
import Foundation

extension BlobStoring {
    /// The store's changes, returned once the stream is subscribed: every change committed after
    /// this returns is delivered, whichever kind of store this is.
    ///
    /// An embedded store's ``BlobStore/BlobStoring/changes()`` subscribes inside the call, so this is
    /// that. A ``RemoteBlobStore``'s feed is requested from blobd on a background thread, and what is
    /// committed before blobd receives the request is not delivered; this returns once blobd has
    /// answered the request (it has the subscription then), so code such as "subscribe, change,
    /// read the changes" works the same on both. Throws, for a ``RemoteBlobStore``, why the feed
    /// could not be started: ``BlobClientError/daemonUnreachable(socketPath:errno:)``, or blobd's refusal.
    public func subscribeToChanges() async throws -> AsyncStream<BlobChange> {
        if let remote = self as? RemoteBlobStore { return try await remote.subscribedChanges() }
        return changes()
    }
}

extension RemoteBlobStore {
    /// ``RemoteBlobStore/changes()`` once blobd has answered the feed's request; see ``BlobStore/BlobStoring/subscribeToChanges()``.
    func subscribedChanges() async throws -> AsyncStream<BlobChange> {
        let gate = SubscriptionGate()
        let events = client.events(store: name, status: { gate.settle(with: $0 == .disconnected ? .disconnected : .connected) })
        let (stream, continuation) = AsyncStream<BlobChange>.makeStream()
        let task = Task {
            do {
                for try await event in events {
                    if case .change(let change) = event { continuation.yield(change) }
                }
                gate.settle(with: .ended(nil))
            } catch {
                gate.settle(with: .ended(error))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        let outcome = await gate.outcome()
        guard case .connected = outcome else {
            task.cancel()
            if case .ended(let error?) = outcome { throw error }
            // The feed could not connect (it would retry): say why, as any other call would.
            _ = try await client.health()
            throw BlobClientError.protocolError("blobd closed the change feed of store '\(name)' before answering it")
        }
        return stream
    }
}

/// The first thing that happened to a change feed being started; later ones are ignored.
///
/// Settled from the feed's thread or the task reading it, awaited by the caller: the state lives
/// behind a lock, and the waiting continuation is resumed outside it. The waiter reads the outcome
/// under the lock too, so the thread sanitizer sees it handed over (a value passed through the
/// continuation alone is not, when it is settled before the waiter has suspended).
final class SubscriptionGate: Sendable {
    /// What happened first.
    enum Outcome: Sendable {
        /// blobd answered the feed's request: it has the subscription.
        case connected
        /// The feed's connection could not be made, or broke before blobd answered.
        case disconnected
        /// The feed ended (with blobd's refusal, or none) before blobd answered.
        case ended((any Error)?)
    }

    private let state = Locked<(outcome: Outcome?, waiter: CheckedContinuation<Void, Never>?)>((nil, nil))

    /// Records `outcome` if it is the first, and wakes the waiter.
    func settle(with outcome: Outcome) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The first outcome, once there is one.
    func outcome() async -> Outcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let settled = state.withLock { state -> Bool in
                if state.outcome != nil { return true }
                state.waiter = continuation
                return false
            }
            if settled { continuation.resume() }
        }
        return state.withLock { $0.outcome! }
    }
}
