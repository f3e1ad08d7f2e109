import BlobProtocol
import BlobStore
import Foundation
import HTTP1

extension BlobClient {
    /// Creates store `name` with `policy` (`PUT /v1/stores/{store}` with every member), or, when it
    /// exists, replaces its policy; returns the store's status afterwards.
    @discardableResult
    public func createStore(_ name: String, policy: StorePolicy = .unlimited) async throws -> StoreStatus {
        try StoreName.validate(name)
        var request = Request(method: .put, target: Route.store(store: name).target, body: .data(Data(PolicyJSON.encode(policy))))
        request.headers.append((name: KnownHeader.contentType.text, value: MediaType.json))
        let response = try await send(request, context: .init(store: name))
        return try WireDecoding.reporting { () throws(WireFormatError) in try StoreStatus(PolicyJSON.decodeStore(response.body)) }
    }

    /// Changes only the members `update` sets of store `name`'s policy (creating the store if needed).
    package func updateStore(_ name: String, _ update: PolicyJSON.Update) async throws -> StoreStatus {
        try StoreName.validate(name)
        var request = Request(method: .put, target: Route.store(store: name).target, body: .data(Data(PolicyJSON.encode(update))))
        request.headers.append((name: KnownHeader.contentType.text, value: MediaType.json))
        let response = try await send(request, context: .init(store: name))
        return try WireDecoding.reporting { () throws(WireFormatError) in try StoreStatus(PolicyJSON.decodeStore(response.body)) }
    }

    /// Store `name`'s policy and usage (`GET /v1/stores/{store}`); throws `notFound` for a store never written.
    public func storeStatus(_ name: String) async throws -> StoreStatus {
        try StoreName.validate(name)
        let response = try await send(Request(method: .get, target: Route.store(store: name).target), context: .init(store: name))
        return try WireDecoding.reporting { () throws(WireFormatError) in try StoreStatus(PolicyJSON.decodeStore(response.body)) }
    }

    /// Every store with its totals and, for the stores the daemon has open, its policy (`GET /v1/stores`).
    package func storesWithPolicies() async throws -> [(summary: StoreSummary, policy: StorePolicy?)] {
        let response = try await send(Request(method: .get, target: Route.stores.target), context: .init())
        return try WireDecoding.reporting { () throws(WireFormatError) in try StoreListJSON.decodeWithPolicies(response.body) }
    }
}

extension RemoteBlobStore {
    /// The store's cache policy (`GET /v1/stores/{store}`); throws `notFound` for a store never written.
    public func policy() async throws -> StorePolicy {
        try await client.storeStatus(name).policy
    }

    /// Replaces the store's cache policy, creating the store if needed (`PUT /v1/stores/{store}`
    /// with every member); the daemon's store applies it at once.
    public func setPolicy(_ policy: StorePolicy) async throws {
        try await client.createStore(name, policy: policy)
    }
}

extension StoreStatus {
    init(_ decoded: (name: String, statistics: StoreStatistics, policy: StorePolicy)) {
        self.init(name: decoded.name, statistics: decoded.statistics, policy: decoded.policy)
    }
}
