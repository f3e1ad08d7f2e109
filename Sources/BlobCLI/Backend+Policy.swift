import BlobClient
import BlobProtocol
import BlobStore

extension BlobBackend {
    /// The stores without policies, for backends that cannot tell them.
    package func storesWithPolicies() async throws -> [(summary: StoreSummary, policy: StorePolicy?)] {
        try await stores().map { ($0, nil) }
    }

    /// Refused by backends without cache policies.
    package func storeStatus(_ name: String) async throws -> StoreStatus {
        throw UsageError("'store show' needs --root or the daemon", command: "store")
    }

    /// Refused by backends without cache policies.
    package func updatePolicy(_ name: String, _ update: PolicyJSON.Update, create: Bool) async throws -> StoreStatus {
        throw UsageError("'store' needs --root or the daemon", command: "store")
    }
}

extension EmbeddedBackend {
    /// Each store opened read-only, as ``stores()`` does, for its totals and policy.
    package func storesWithPolicies() async throws -> [(summary: StoreSummary, policy: StorePolicy?)] {
        var result: [(summary: StoreSummary, policy: StorePolicy?)] = []
        for name in try storeNames() {
            let store = try await openReadOnly(name)
            result.append((StoreSummary(name: name, statistics: try await store.statistics()), try await store.policy()))
        }
        return result
    }

    /// Opened read-only: works while blobd serves the root.
    package func storeStatus(_ name: String) async throws -> StoreStatus {
        guard try await storeExists(name) else { throw CLIError.storeNotFound(store: name, location: location) }
        let store = try await openReadOnly(name)
        return StoreStatus(name: name, statistics: try await store.statistics(), policy: try await store.policy())
    }

    /// Opened for writing, waiting for the store's lock like any change.
    package func updatePolicy(_ name: String, _ update: PolicyJSON.Update, create: Bool) async throws -> StoreStatus {
        if !create, !(try await storeExists(name)) { throw CLIError.storeNotFound(store: name, location: location) }
        let store = try await open(name)
        let current = try await store.policy()
        let policy = update.applied(to: current)
        if policy != current { try await store.setPolicy(policy) }
        return StoreStatus(name: name, statistics: try await store.statistics(), policy: policy)
    }
}

extension DaemonBackend {
    /// One `GET /v1/stores`: the daemon sends the policies of the stores it has open.
    package func storesWithPolicies() async throws -> [(summary: StoreSummary, policy: StorePolicy?)] {
        try await client.storesWithPolicies()
    }

    /// `GET /v1/stores/{store}`.
    package func storeStatus(_ name: String) async throws -> StoreStatus {
        do { return try await client.storeStatus(name) } catch BlobStoreError.notFound {
            throw CLIError.storeNotFound(store: name, location: location)
        }
    }

    /// `PUT /v1/stores/{store}` with the members `update` sets; without `create`, a store the daemon
    /// does not have is not found (asked first: the PUT would create it).
    package func updatePolicy(_ name: String, _ update: PolicyJSON.Update, create: Bool) async throws -> StoreStatus {
        if !create { _ = try await storeStatus(name) }
        return try await client.updateStore(name, update)
    }
}
