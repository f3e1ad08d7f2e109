import BlobClient
import BlobStore
import BlobSystem
import Foundation

/// The blobs served by a running `blobd`, reached through ``BlobClient`` over its Unix socket.
package struct DaemonBackend: BlobBackend {
    /// The client (one connection pool for the whole command).
    package let client: BlobClient

    /// Connects to the daemon at `socketPath`; throws ``CLIError/daemonUnreachable(socket:reason:)``
    /// (exit 69) when nothing answers there.
    package init(socketPath: String) async throws {
        client = BlobClient(socketPath: socketPath)
        do {
            _ = try await client.health()
        } catch let error as BlobClientError {
            if case .daemonUnreachable(_, let errno) = error {
                throw CLIError.daemonUnreachable(socket: socketPath, reason: errno.description)
            }
            throw error
        }
    }

    /// Makes the backend for a socket path: what `blob` uses when there is no `--root`.
    package static let connector: DaemonConnector = { socketPath in try await DaemonBackend(socketPath: socketPath) }

    package var location: String { "daemon at \(client.socketPath)" }

    package func store(_ name: String, create: Bool) async throws -> any BlobStoring {
        // A store that was never written answers 404 (mapped to notFound) on reads, so nothing to check here.
        try client.store(name)
    }

    package func stores() async throws -> [StoreSummary] { try await client.stores() }

    /// Whether the daemon lists the store (`GET /v1/stores`): its reads of a missing store look
    /// like those of an empty one.
    package func storeExists(_ name: String) async throws -> Bool {
        try await client.stores().contains { $0.name == name }
    }

    package func verify(_ store: String?) async throws -> [StoreVerification] { try await verify(store, repair: false) }

    package func verify(_ store: String?, repair: Bool) async throws -> [StoreVerification] {
        let names: [String]
        if let store { names = [store] } else { names = try await client.stores().map(\.name) }
        var result: [StoreVerification] = []
        for name in names {
            do {
                result.append(StoreVerification(name: name, report: try await client.verify(store: name, repair: repair)))
            } catch BlobStoreError.notFound {
                throw CLIError.storeNotFound(store: name, location: location)
            }
        }
        return result
    }

    package func changes(_ store: String?, status: @escaping @Sendable (WatchStatus) -> Void) async throws -> AsyncStream<BlobChange> {
        // Told once per outage: the feed retries every 0.1…2 s while the daemon is away.
        let lost = Locked(false)
        let events = client.events(store: store) { feedStatus in
            switch feedStatus {
            case .disconnected:
                if lost.withLock({ wasLost in defer { wasLost = true }; return !wasLost }) { status(.reconnecting) }
            case .connected(let last):
                if lost.withLock({ wasLost in defer { wasLost = false }; return wasLost }) { status(.resumed(afterEventID: last)) }
            }
        }
        return AsyncStream { continuation in
            let task = Task {
                do {
                    for try await event in events {
                        if case .change(let change) = event { continuation.yield(change) }
                    }
                } catch {}
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
