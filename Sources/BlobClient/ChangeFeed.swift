import BlobProtocol
import BlobStore
internal import BlobSystem
import Foundation
import HTTP1

/// What the daemon's change feed (`GET /v1/events`) delivers.
public enum WatchEvent: Hashable, Sendable {
    /// A committed change.
    case change(BlobChange)
    /// Events between `lastEventID` and `firstAvailableID` are gone (the daemon's buffer moved on, or it restarted):
    /// re-read what you cache.
    case gap(lastEventID: UInt64, firstAvailableID: UInt64)
}

/// Decoding of change-feed events.
enum ChangeDecoding {
    /// The watch event an SSE event stands for; `nil` for types this client does not know.
    static func watchEvent(_ event: ServerSentEvent) throws -> WatchEvent? {
        let decoded = try WireDecoding.reporting { () throws(WireFormatError) in
            try ChangeEventJSON.decode(event: event.event, id: event.id, data: event.data)
        }
        switch decoded {
        case .change(let change): return .change(change)
        case .gap(let last, let first): return .gap(lastEventID: last, firstAvailableID: first)
        case nil: return nil
        }
    }
}

extension BlobClient {
    /// Committed changes (of `store`, or of every store when `nil`) from now on, from the daemon's
    /// `GET /v1/events` feed. Gaps are skipped; use ``events(store:)`` to see them.
    ///
    /// A dropped connection is re-established (back-off 100 ms doubling to 2 s) with `Last-Event-ID`,
    /// so a daemon restart loses nothing the daemon still has. The stream ends with an error only when
    /// the daemon refuses the feed (e.g. `404` from a daemon without one).
    public func changes(store: String?) -> AsyncThrowingStream<BlobChange, Error> {
        let events = events(store: store)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in events {
                        if case .change(let change) = event { continuation.yield(change) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The change feed, gaps included; see ``changes(store:)``.
    public func events(store: String?) -> AsyncThrowingStream<WatchEvent, Error> {
        events(store: store, status: nil)
    }

    /// The change feed, telling `status` (on the feed's thread) when its connection is lost and when
    /// it is up again (`blob watch` says "reconnecting…").
    package func events(store: String?, status: (@Sendable (ChangeFeedStatus) -> Void)?) -> AsyncThrowingStream<WatchEvent, Error> {
        let (stream, continuation) = AsyncThrowingStream<WatchEvent, Error>.makeStream()
        let feed = ChangeFeed(client: self, store: store, continuation: continuation, status: status)
        continuation.onTermination = { _ in feed.cancel() }
        BlockingThreads.detach { feed.run() }
        return stream
    }
}

/// The connection state of a change feed.
package enum ChangeFeedStatus: Sendable, Hashable {
    /// The daemon answered the feed's request (`Last-Event-ID` is the id it resumes after, if any).
    case connected(lastEventID: String?)
    /// The connection ended or could not be made; the feed retries.
    case disconnected
}

/// The blocking loop behind ``BlobClient/events(store:)``: connect, read, parse, reconnect.
final class ChangeFeed: Sendable {
    private let client: BlobClient
    private let store: String?
    private let continuation: AsyncThrowingStream<WatchEvent, Error>.Continuation
    private let status: (@Sendable (ChangeFeedStatus) -> Void)?
    /// Cancelled, and the connection being read (shut down to wake the reader).
    private let state = Locked<(cancelled: Bool, connection: Connection?)>((false, nil))

    init(
        client: BlobClient, store: String?, continuation: AsyncThrowingStream<WatchEvent, Error>.Continuation,
        status: (@Sendable (ChangeFeedStatus) -> Void)? = nil
    ) {
        self.client = client
        self.store = store
        self.continuation = continuation
        self.status = status
    }

    func cancel() {
        let connection = state.withLock { state -> Connection? in
            state.cancelled = true
            return state.connection
        }
        connection?.shutdown()
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    func run() {
        var parser = EventStreamParser()
        var backoff = 0.1
        while !isCancelled {
            do {
                let connected = try readOnce(parser: &parser)
                if connected { backoff = 0.1 }
            } catch {
                if !isCancelled { continuation.finish(throwing: error) }
                return
            }
            if isCancelled { break }
            status?(.disconnected)
            parser.resetPartialEvent()
            // Back off before reconnecting, waking early if cancelled.
            let until = Date().addingTimeInterval(backoff)
            while !isCancelled && Date() < until { usleep(20_000) }
            backoff = min(backoff * 2, 2.0)
        }
        continuation.finish()
    }

    /// One connection's worth of events. Returns whether it got a `200` (to reset the back-off);
    /// throws only for answers that reconnecting will not change.
    private func readOnce(parser: inout EventStreamParser) throws -> Bool {
        let connection: Connection
        do { connection = try client.transport.pool.fresh() } catch { return false }  // Daemon down: retry.
        let registered = state.withLock { state -> Bool in
            if state.cancelled { return false }
            state.connection = connection
            return true
        }
        defer {
            state.withLock { $0.connection = nil }
            connection.close()
        }
        guard registered else { return false }
        var target = Route.events.target
        if let store { target += "?\(ListParameters.store)=" + Route.encode(store) }
        var request = Request(method: .get, target: target)
        request.headers.append((name: KnownHeader.accept.text, value: MediaType.eventStream))
        if let last = parser.lastEventID { request.headers.append((name: KnownHeader.lastEventID.text, value: last)) }
        var reader: ResponseReader
        do {
            try connection.sendRequest(request.serializedHead(contentLength: nil), timeout: client.configuration.requestTimeout)
            reader = try ResponseReader(connection: connection, method: .get, timeout: client.configuration.idleTimeout)
        } catch {
            return false
        }
        let status = reader.response.status.code
        guard status == 200 else {
            let body = (try? reader.readAll(from: connection)) ?? []
            let error = ErrorMapping.error(status: status, headers: reader.response.headers, body: body, context: .init(store: nil))
            if status >= 500 { return false }  // Perhaps transient: retry.
            throw error
        }
        self.status?(.connected(lastEventID: parser.lastEventID))
        // Heartbeats arrive well within the idle timeout; silence that long means a dead feed: reconnect.
        do {
            while let bytes = try reader.next(from: connection, limit: 65536) {
                for event in parser.feed(bytes) {
                    if let value = try ChangeDecoding.watchEvent(event) {
                        if case .change(let change) = value, let store, change.store != store { continue }
                        continuation.yield(value)
                    }
                }
            }
        } catch is TransportError {
            // Dropped or timed out: reconnect.
        }
        return true
    }
}
