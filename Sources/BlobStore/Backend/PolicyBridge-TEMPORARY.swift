internal import BlobSystem
import Foundation

// TEMPORARY (issue 18, branch h/policywire): stands in for the policy engine's declarations so that
// the wire, client and CLI build and their policy round trips run before the engine is merged.
// Delete this file when the engine lands; its real declarations have exactly these names:
// `PersistentDataStore.policy()`, `.setPolicy(_:)`, the same on `InMemoryBlobStore`, and the two
// `ServedBackend` requirements. Nothing here enforces a policy (no expiry, no eviction).

/// The policy each store object was given, held in memory only (the engine keeps it with the store).
private let bridgedPolicies = Locked<[ObjectIdentifier: StorePolicy]>([:])

extension PersistentDataStore {
    /// The store's cache policy (TEMPORARY: held in memory by this process only).
    public func policy() async throws -> StorePolicy {
        bridgedPolicies.withLock { $0[ObjectIdentifier(self)] } ?? .unlimited
    }

    /// Replaces the store's cache policy (TEMPORARY: held in memory, not enforced).
    public func setPolicy(_ policy: StorePolicy) async throws {
        bridgedPolicies.withLock { $0[ObjectIdentifier(self)] = policy }
    }
}

extension InMemoryBlobStore {
    /// The store's cache policy (TEMPORARY: held in memory by this process only).
    public func policy() async throws -> StorePolicy {
        bridgedPolicies.withLock { $0[ObjectIdentifier(self)] } ?? .unlimited
    }

    /// Replaces the store's cache policy (TEMPORARY: held in memory, not enforced).
    public func setPolicy(_ policy: StorePolicy) async throws {
        bridgedPolicies.withLock { $0[ObjectIdentifier(self)] = policy }
    }
}

extension ServedBackend {
    /// The store's cache policy (TEMPORARY: the engine makes this a requirement of the protocol).
    package func policy() async throws -> StorePolicy {
        bridgedPolicies.withLock { $0[ObjectIdentifier(self)] } ?? .unlimited
    }

    /// Replaces the store's cache policy (TEMPORARY: the engine makes this a requirement of the protocol).
    package func setPolicy(_ policy: StorePolicy) async throws {
        bridgedPolicies.withLock { $0[ObjectIdentifier(self)] = policy }
    }
}
