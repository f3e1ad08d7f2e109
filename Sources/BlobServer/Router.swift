import BlobProtocol
import BlobStore
import Foundation
import HTTP1

/// Turns request heads into actions on the stores. Shared by all loops; holds no per-request state.
final class Router: Sendable {
    let stores: StoreDirectory
    /// Change events for `/v1/events`.
    let events: EventLog
    /// Counters for `/metrics`.
    let metrics: Metrics
    /// Expiries and evictions per store, for `/metrics`.
    let policyCounters: PolicyCounters
    /// Bodies up to this size are copied into the response buffer (one `send` with the head);
    /// larger ones go out with `sendfile`.
    static let inlineBodyLimit: Int64 = 64 * 1024
    /// Blobs up to this size are checked whole before a GET answers (`500 corrupt` if damaged), even
    /// when their body is sent from the file; the loop sends such a body's last part only after the
    /// check anyway (``EventLoop``), so checking first costs no extra read and tells the client.
    static let checkedFirstLimit: Int64 = 1 << 20

    init(stores: StoreDirectory, events: EventLog, metrics: Metrics, policyCounters: PolicyCounters = PolicyCounters()) {
        self.stores = stores
        self.events = events
        self.metrics = metrics
        self.policyCounters = policyCounters
    }

    /// Decides what to do with `head`, and which operation it counts as in the metrics.
    func action(for head: HTTPRequestHead) -> (RequestAction, MetricOperation) {
        let route: Route
        do { route = try Route(encodedPath: head.pathBytes) } catch {
            var operation = MetricOperation.other
            if case .invalidName(_, let refused) = error { operation = Router.operation(route: refused, method: head.method) }
            return (.respond(APIError(error, path: head.path).response()), operation)
        }
        return (action(route: route, head: head), Router.operation(route: route, method: head.method))
    }

    /// The metrics label of a request.
    static func operation(route: Route, method: HTTPMethod) -> MetricOperation {
        switch (route, method) {
        case (.blob, .get): return .get
        case (.blob, .head): return .head
        case (.blob, .put): return .put
        case (.blob, .delete): return .delete
        case (.blobs, .get): return .list
        case (.blobs, .delete): return .deleteAll
        case (.stores, .get), (.stores, .head), (.store, .get), (.store, .head), (.store, .put): return .stores
        case (.events, .get), (.events, .head): return .events
        case (.health, _): return .health
        case (.metrics, .get), (.metrics, .head): return .metrics
        case (.verify, .get), (.verify, .head), (.verify, .post): return .verify
        case (.blobs, .head): return .list
        default: return .other
        }
    }

    private func action(route: Route, head: HTTPRequestHead) -> RequestAction {
        do {
            switch (route, head.method) {
            case (.health, .get), (.health, .head):
                var response = Response(status: .ok, json: ReportJSON.healthy)
                response.omitBody = head.method == .head
                return .respond(response)
            // HEAD wherever GET works (RFC 9110 §9.3.2): the same status and headers, no body (the
            // loop leaves out the body of every response to a HEAD).
            case (.stores, .get), (.stores, .head):
                return listStores()
            case (.events, .get):
                return try eventStream(head)
            case (.events, .head):
                _ = try eventStream(head)  // the same checks as GET
                return .respond(Response.eventStreamHead())
            case (.store(let store), .get), (.store(let store), .head), (.store(let store), .put):
                return try storeRequest(store: store, head: head)
            case (.verify(let store), .get), (.verify(let store), .head):
                return try verify(store: store, repair: false)
            case (.verify(let store), .post):
                return try verify(store: store, repair: true)
            case (.metrics, .get), (.metrics, .head):
                return metricsPage()
            case (.blobs(let store), .get), (.blobs(let store), .head):
                return try list(store: store, head: head)
            case (.blobs(let store), .delete):
                return try removeAll(store: store)
            case (.blob(let store, let id), .get), (.blob(let store, let id), .head):
                return try get(store: store, identifier: id, head: head)
            case (.blob(let store, let id), .put):
                return try put(store: store, identifier: id, head: head)
            case (.blob(let store, let id), .delete):
                return try remove(store: store, identifier: id, head: head)
            case (.health, _), (.stores, _), (.store, _), (.events, _), (.metrics, _), (.verify, _), (.blobs, _), (.blob, _):
                return .respond(Router.methodNotAllowed(head.method, allow: route.allowedMethods))
            }
        } catch let error as APIError {
            return .respond(error.response())
        } catch {
            return .respond(APIError(error).response())
        }
    }

    /// The response for an error a store call (or the router) threw.
    static func errorResponse(_ error: any Error) -> Response {
        ((error as? APIError) ?? APIError(error)).response()
    }

    static func methodNotAllowed(_ method: HTTPMethod, allow: String) -> Response {
        var response = APIError(.methodNotAllowed, "method \(method.token) is not allowed here; allowed: \(allow)").response()
        response.header(.allow, allow)
        return response
    }

    /// The store, or a 404 when it has never been written. May block: call off the loops.
    func existingStore(_ name: String) throws -> any ServedBackend {
        guard let store = try stores.existing(name) else {
            throw APIError(.notFound, "store '\(name)' not found")
        }
        return store
    }

    // MARK: Lists

    private func list(store name: String, head: HTTPRequestHead) throws -> RequestAction {
        var query = ListQuery()
        let items: [QueryItem]
        do { items = try head.queryItems() } catch {
            throw APIError(.invalidQuery, "the query string is not valid percent-encoding: \(error)")
        }
        for item in items {
            switch item.name {
            case ListParameters.prefix: query.prefix = item.value
            case ListParameters.type: query.contentTypePrefix = item.value.isEmpty ? nil : item.value
            case ListParameters.sort:
                guard let sort = ListQuery.Sort(rawValue: item.value) else {
                    throw APIError(.invalidQuery, "sort must be 'identifier' or 'modified' (got '\(item.value)')")
                }
                query.sort = sort
            case ListParameters.limit:
                guard let limit = Int(item.value) else {
                    throw APIError(.invalidQuery, "limit must be an integer 1...\(ListQuery.maximumLimit) (got '\(item.value)')")
                }
                query.limit = limit
            case ListParameters.cursor: query.cursor = item.value.isEmpty ? nil : item.value
            default: break
            }
        }
        try StoreName.validate(name)
        let finalQuery = query
        return .offload(.scan) { [self] in
            do { return Response(status: .ok, json: MetadataJSON.encode(try await existingStore(name).list(finalQuery))) } catch {
                return Router.errorResponse(error)
            }
        }
    }

    private func eventStream(_ head: HTTPRequestHead) throws -> RequestAction {
        var store: String?
        let items: [QueryItem]
        do { items = try head.queryItems() } catch {
            throw APIError(.invalidQuery, "the query string is not valid percent-encoding: \(error)")
        }
        for item in items where item.name == ListParameters.store && !item.value.isEmpty {
            try StoreName.validate(item.value)
            store = item.value
        }
        var lastEventID: UInt64?
        if let text = head.lastEventID?.trimmingSpaces(), !text.isEmpty {
            guard let id = UInt64(text) else {
                throw APIError(.badRequest, "Last-Event-ID must be an event id (digits), got '\(text)'")
            }
            lastEventID = id
        }
        return .events(store: store, lastEventID: lastEventID)
    }

    /// Reads every blob of the store and checks it; slow on big stores. Read-only, unless `repair`
    /// (POST), which moves what is damaged or foreign into the store's `quarantine/` folder.
    private func verify(store name: String, repair: Bool) throws -> RequestAction {
        try StoreName.validate(name)
        return .offload(.scan) { [self] in
            do {
                let report = try await existingStore(name).verify(repair: repair)
                return Response(status: .ok, json: try ReportJSON.encode(report))
            } catch {
                return Router.errorResponse(error)
            }
        }
    }

    private func metricsPage() -> RequestAction {
        let directory = stores, metrics = metrics, events = events, policyCounters = policyCounters
        return .offload(.scan) {
            // Only the stores this daemon has open: opening one takes its lock, which would shut
            // other processes out of stores the daemon never served. Only those it counts itself:
            // an S3 store's count is a listing of its whole prefix, too much for every scrape, and
            // a stalled object store would hold the scrape for a timeout per store.
            var totals: [(name: String, statistics: StoreStatistics, memoryTier: MemoryTierStatistics?)] = []
            for (name, store) in directory.openStores().sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
                guard store.countsLocally, let statistics = try? await store.statistics() else { continue }
                totals.append((name, statistics, store.memoryTierFigures))
            }
            var response = Response(status: .ok)
            response.header(.contentType, MediaType.metrics)
            response.body = metrics.render(stores: totals, eventSubscribers: events.subscriberCount)
            response.body += await Router.policyMetrics(stores: directory.openStores(), counters: policyCounters)
            return response
        }
    }

    /// Every store folder, without opening any: opening one takes its lock, which would shut other
    /// processes out of stores this daemon never served. Totals come from the stores the daemon
    /// has open; the others say whether another process holds them.
    private func listStores() -> RequestAction {
        let directory = stores
        // The root's listing and the lock table are blocking reads, made on a blocking-work thread.
        return .offload(.scan) {
            let names: [String]
            do { names = try directory.storeNames() } catch {
                return Router.errorResponse(error)
            }
            let open = directory.openStores()
            let holders = directory.catalog.otherHolders(of: names.filter { open[$0] == nil })
            var entries: [StoreListJSON.Entry] = []
            for name in names {
                var entry = StoreListJSON.Entry(name: name, open: open[name] != nil, heldBy: holders[name])
                if let store = open[name] {
                    do { entry.statistics = try await store.statistics() } catch { entry.error = "\(error)" }
                    entry.policy = try? await store.policy()
                }
                entries.append(entry)
            }
            return Response(status: .ok, json: StoreListJSON.encode(entries))
        }
    }

    // MARK: Removes

    private func removeAll(store name: String) throws -> RequestAction {
        try StoreName.validate(name)
        let directory = stores
        return .offload(.quick) {
            do {
                try await directory.existing(name)?.removeAll()
                return Response(status: .noContent)
            } catch {
                return Router.errorResponse(error)
            }
        }
    }

    private func remove(store name: String, identifier: String, head: HTTPRequestHead) throws -> RequestAction {
        let condition = try Router.writeCondition(head, allowNoneMatch: true)
        try BlobIdentifier.validate(identifier)
        try StoreName.validate(name)
        let directory = stores
        return .offload(.quick) {
            do {
                guard let store = try directory.existing(name) else {
                    // No store, so no current version: an `If-Match` fails (RFC 9110 §13.1.1), as it does
                    // for a missing blob of an existing store.
                    if case .ifMatch(let tag) = condition {
                        throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: tag, actual: nil)
                    }
                    throw APIError(.notFound, "store '\(name)' not found")
                }
                guard try await store.remove(identifier, condition: condition) else {
                    throw BlobStoreError.notFound(store: name, identifier: identifier)
                }
                return Response(status: .noContent)
            } catch {
                return Router.errorResponse(error)
            }
        }
    }

    /// `If-Match: "etag"` / `If-None-Match: *` as a store write condition.
    static func writeCondition(_ head: HTTPRequestHead, allowNoneMatch: Bool) throws -> WriteCondition {
        if let value = head.ifMatch.map({ String($0.trimmingSpaces()) }) {
            guard let tag = ETag(value) else {
                if value == "*" {
                    throw APIError(.badRequest, "If-Match: * is not supported; send the current ETag")
                }
                // A tag this store could never have issued cannot match.
                throw APIError(.preconditionFailed, "If-Match \(value) does not match the current version")
            }
            return .ifMatch(tag)
        }
        if allowNoneMatch, let value = head.ifNoneMatch?.trimmingSpaces() {
            guard value == "*" else {
                throw APIError(.badRequest, "on \(head.method.token), If-None-Match must be '*' (only if absent)")
            }
            return .ifNoneMatch
        }
        return .none
    }
}
