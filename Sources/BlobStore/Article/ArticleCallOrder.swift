internal import BlobSystem
import Dispatch

/// Puts a store's article calls (``ArticleDataStoring``) in the order they were made, as the
/// article's concurrent `DispatchQueue` with barrier writes does: a read runs after every change
/// made before it, a change after every call made before it, and reads run side by side.
///
/// The order is fixed inside the call, before it returns: the call is recorded together with the
/// calls it must wait for — the last change made before it and, for a change, the reads made since
/// that change. A call starts once all of those have finished (their completion handlers queued),
/// so it does not matter which thread or task later does the work. Waiting is by hand-off, not by
/// blocking: a finished call starts the calls that were waiting for it, each in a task that runs
/// the store's async API, which keeps blocking I/O off the Swift concurrency pool.
///
/// Data providers and transformers are caller code that may block, so each runs on a dispatch queue
/// of its own (``runCallerCode(_:)``): a serial queue made for the call, which libdispatch serves
/// from its overcommitting pool — a new thread when every thread is busy. On one shared concurrent
/// queue, providers that block (waiting, say, for a load they made of the same store) would hold
/// the few threads that queue gets and starve the very calls they wait for. A provider starts as soon as its `storeData` is called, beside earlier calls; only the write
/// waits for them. A call that a provider makes to the same store's article API while it runs, on
/// the provider's own thread (or in a task it starts there), is ordered just before the `storeData`
/// it feeds — the article would deadlock there; here a provider can read what it transforms.
///
/// Who owns what: `state` (a lock) owns the frontiers; each ``ArticleCall`` owns its own counters
/// under its own lock. A call's lock may be taken while `state`'s is held, never the other way round.
/// Nothing runs caller code or starts work while holding either.
public final class ArticleCallOrder: Sendable {
    private let state = Locked(State())

    private struct State {
        /// Where calls made from anywhere but a running provider go.
        var top = Frontier()
        /// The frontiers of `storeData` calls whose provider is running, by call: what the provider's
        /// own calls wait for. Removed when the provider returns.
        var providing: [ObjectIdentifier: Frontier] = [:]
    }

    /// The calls that a new call may have to wait for, at one point of the order.
    struct Frontier {
        /// The last change made.
        var lastChange: ArticleCall?
        /// The reads made since ``lastChange`` (finished ones are dropped now and then).
        var readsSince: [ArticleCall] = []
        /// When ``readsSince`` next drops finished reads: a long run of reads keeps it bounded by the
        /// reads in flight, at amortised constant cost.
        private var pruneAt = 64

        /// Records `call` as the newest call and returns the calls it has to wait for.
        mutating func append(_ call: ArticleCall, change: Bool) -> [ArticleCall] {
            if change {
                var waitFor = readsSince
                if let lastChange { waitFor.append(lastChange) }
                lastChange = call
                readsSince = []
                pruneAt = 64
                return waitFor
            }
            if readsSince.count >= pruneAt {
                readsSince.removeAll { $0.isFinished }
                pruneAt = max(64, readsSince.count * 2)
            }
            readsSince.append(call)
            return lastChange.map { [$0] } ?? []
        }
    }

    /// The `storeData` calls whose provider is running on the current thread or task, innermost last.
    @TaskLocal static var runningProviders: [ArticleCall] = []

    /// An empty order.
    public init() {}

    /// Runs caller code (a data provider, a data transformer and the hand-off of its result) on a
    /// queue of its own, beside every other call's.
    func runCallerCode(_ work: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "BlobStore.article.caller-code").async(execute: work)
    }

    /// Records a call in the order and starts it once every call before it that it depends on has
    /// finished. `start` must not block; it runs the call and calls ``ArticleCall/finish()`` at the end.
    ///
    /// With `awaitingProvider`, the call also waits for one ``ArticleCall/release()`` by its provider,
    /// which must run inside ``runProvider(of:_:)`` so that the provider's own calls come first.
    @discardableResult
    func schedule(change: Bool, awaitingProvider: Bool = false, start: @escaping @Sendable (ArticleCall) -> Void) -> ArticleCall {
        let call = ArticleCall(start: start)
        if awaitingProvider { call.hold() }
        let providers = Self.runningProviders
        state.withLock { state in
            let dependencies: [ArticleCall]
            let before: Frontier
            if let parent = providers.last(where: { state.providing[ObjectIdentifier($0)] != nil }) {
                // Made by a running provider: goes just before the store that provider feeds.
                let key = ObjectIdentifier(parent)
                before = state.providing[key]!
                dependencies = state.providing[key]!.append(call, change: change)
                parent.hold()
                _ = call.addDependent(parent)
            } else {
                before = state.top
                dependencies = state.top.append(call, change: change)
            }
            if awaitingProvider { state.providing[ObjectIdentifier(call)] = before }
            for dependency in dependencies {
                call.hold()
                if !dependency.addDependent(call) { call.release() }  // never the last hold: the caller's is still on
            }
        }
        call.release()  // the caller's hold, taken at creation
        return call
    }

    /// Runs `provider` (on the calling thread) as the provider of `call`, so that the calls it makes
    /// are ordered before `call`; then lets `call` start once its dependencies are done.
    func runProvider<T>(of call: ArticleCall, _ provider: () -> T) -> T {
        let value = Self.$runningProviders.withValue(Self.runningProviders + [call]) { provider() }
        state.withLock { _ = $0.providing.removeValue(forKey: ObjectIdentifier(call)) }
        call.release()
        return value
    }
}

/// One article call in a store's ``ArticleCallOrder``: how many things it still waits for, and the
/// calls waiting for it. Its lock owns both; no other lock is taken while it is held.
final class ArticleCall: Sendable {
    private struct State {
        /// Unfinished calls (plus the creator's hold and the provider's, while they last) this call waits for.
        var blockers = 1
        var finished = false
        /// Calls waiting for this one; emptied when it finishes.
        var dependents: [ArticleCall] = []
        /// What starts the call; taken (and so dropped) when the last blocker goes.
        var start: (@Sendable (ArticleCall) -> Void)?
    }
    private let state: Locked<State>

    init(start: @escaping @Sendable (ArticleCall) -> Void) {
        state = Locked(State(start: start))
    }

    /// Whether the call has finished.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Adds one thing to wait for.
    func hold() { state.withLock { $0.blockers += 1 } }

    /// Removes one thing to wait for; starts the call (on this thread) when it was the last.
    func release() {
        let start = state.withLock { state -> (@Sendable (ArticleCall) -> Void)? in
            state.blockers -= 1
            guard state.blockers == 0 else { return nil }
            defer { state.start = nil }
            return state.start
        }
        start?(self)
    }

    /// Makes `call` wait for this call; returns `false` (and does nothing) if this one has finished.
    func addDependent(_ call: ArticleCall) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            state.dependents.append(call)
            return true
        }
    }

    /// Marks the call finished and lets the calls waiting for it go.
    func finish() {
        let waiting = state.withLock { state -> [ArticleCall] in
            state.finished = true
            defer { state.dependents = [] }
            return state.dependents
        }
        for call in waiting { call.release() }
    }
}
