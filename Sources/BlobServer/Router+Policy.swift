import BlobProtocol
import BlobStore
import BlobSystem
import Foundation
import HTTP1

/// Cache mode on the wire (docs/PROTOCOL.md, "Store policy" and "Expiry"): `/v1/stores/{store}`
/// reads and sets a store's policy, and a PUT's expiry headers become ``PutOptions/expiry``.
extension Router {
    /// `GET`/`HEAD`/`PUT /v1/stores/{store}`.
    func storeRequest(store name: String, head: HTTPRequestHead) throws -> RequestAction {
        try StoreName.validate(name)
        switch head.method {
        case .put:
            return putPolicy(store: name)
        default:
            let isHead = head.method == .head
            return .offload(.scan) { [self] in
                do {
                    let store = try existingStore(name)
                    let policy = try await store.policy()
                    var response = Response(status: .ok, json: PolicyJSON.encodeStore(name: name, statistics: try await store.statistics(), policy: policy))
                    response.omitBody = isHead
                    return response
                } catch {
                    return Router.errorResponse(error)
                }
            }
        }
    }

    /// `PUT /v1/stores/{store}`: the body (a policy update, at most ``PolicyJSON/bodyLimit`` bytes)
    /// is read like a blob's, through an upload that keeps it in memory; the store is created if
    /// needed, and discarded again, as for a blob PUT, when the update is refused.
    private func putPolicy(store name: String) -> RequestAction {
        .upload(UploadStart(stores: stores, store: name, purpose: .policy(answer: PolicyAnswer())))
    }

    /// The expiry a PUT's `Blob-Expires` and `Cache-Control` ask for (``BlobExpiry/storeDefault``
    /// when they say nothing); `400 bad_request` naming the field when they cannot be understood.
    static func expiry(_ head: HTTPRequestHead) throws -> BlobExpiry {
        // One pass over the fields without making Strings of their names: this runs on every PUT,
        // and nearly every PUT has neither field.
        var blobExpires: String?
        var cacheControl: String?
        let headers = head.headers
        for index in headers.indices {
            if headers.knownName(at: index) == .cacheControl {
                let value = headers.value(at: index)
                cacheControl = cacheControl.map { "\($0), \(value)" } ?? value
            } else if blobExpires == nil, HeaderName.expires.matches(fieldName: headers.nameBytes(at: index)) {
                blobExpires = headers.value(at: index)
            }
        }
        guard blobExpires != nil || cacheControl != nil else { return .storeDefault }
        do { return try ExpiryHeaders.expiry(blobExpires: blobExpires, cacheControl: cacheControl) } catch {
            throw APIError(.badRequest, error.description)
        }
    }

    /// The `/metrics` lines of cache mode: expiries and evictions per store since the daemon
    /// started, and the limits, waiting puts and peak usage of each open store that has limits.
    static func policyMetrics(stores: [String: any ServedBackend], counters: PolicyCounters) async -> [UInt8] {
        var limits: [(name: String, policy: StorePolicy)] = []
        var figures: [(name: String, counters: CacheCounters)] = []
        for (name, store) in stores {
            guard let policy = try? await store.policy() else { continue }
            limits.append((name, policy))
            if policy.maximumBytes != nil || policy.maximumCount != nil, let cache = try? await store.cacheFigures() { figures.append((name, cache)) }
        }
        func byName<T>(_ items: [(name: String, T)]) -> [(name: String, T)] { items.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) } }
        return counters.render(limits: byName(limits), cache: byName(figures))
    }
}

/// The response a policy update leaves for its request's `finish`, set once by the commit.
final class PolicyAnswer: Sendable {
    let response = Locked<Response?>(nil)
}

/// A policy update's body on its way in: kept in memory (it is small), decoded and applied at the
/// commit. Used by one thread at a time, as every upload is (``BackendUpload``), so its buffer
/// needs no lock of its own; the lock only makes that hand-off visible to the checkers.
final class PolicyUpload: BackendUpload {
    private let store: any ServedBackend
    private let created: Bool
    private let answer: PolicyAnswer
    /// Where the commit's task runs: blobd's blocking-work threads (see ``ServedBackend``, "Where each call runs").
    private let pool: BlockingPool
    private let body = Locked<[UInt8]>([])

    init(store: any ServedBackend, created: Bool, answer: PolicyAnswer, pool: BlockingPool) {
        self.store = store
        self.created = created
        self.answer = answer
        self.pool = pool
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try body.withLock { body in
            guard body.count + bytes.count <= PolicyJSON.bodyLimit else {
                throw APIError(.tooLarge, "a store policy is at most \(PolicyJSON.bodyLimit) bytes of JSON")
            }
            body.append(contentsOf: bytes.bindMemory(to: UInt8.self))
        }
    }

    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
        let bytes = body.withLock { $0 }
        let update: PolicyJSON.Update
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            update = PolicyJSON.Update()  // no body: create the store, change nothing
        } else {
            do { update = try PolicyJSON.decodeUpdate(bytes) } catch {
                return completion(.failure(APIError(.invalidPolicy, error.description)))
            }
        }
        let (store, created, answer) = (store, created, answer)
        // The store's policy calls are async; a backend may block the thread it runs them on (the
        // ServedBackend contract), so their task runs on the blocking pool, never on the Swift
        // concurrency pool.
        Task(executorPreference: pool) {
            do {
                let current = try await store.policy()
                let policy = update.applied(to: current)
                if policy != current { try await store.setPolicy(policy) }
                let statistics = try await store.statistics()
                let response = Response(
                    status: created ? .created : .ok, json: PolicyJSON.encodeStore(name: store.name, statistics: statistics, policy: policy))
                answer.response.withLock { $0 = response }
                completion(.success(PolicyUpload.placeholder))
            } catch {
                completion(.failure(error))
            }
        }
    }

    func cancel() {
        body.withLock { $0 = [] }
    }

    /// What the commit reports to the upload machinery, which wants a blob's metadata; the
    /// response itself is in ``PolicyAnswer``.
    private static let placeholder = BlobMetadata(
        identifier: "", size: 0, contentType: MediaType.json, etag: ETag("0000000000000000")!, created: Date(timeIntervalSince1970: 0),
        modified: Date(timeIntervalSince1970: 0))
}
