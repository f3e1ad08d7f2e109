import BlobStore
import Foundation
import S3BlobStore

/// The blobs in an S3 bucket, used directly without a daemon (`--backend s3://BUCKET[/PREFIX]`):
/// each store is an ``S3BlobStore`` under the location, and exists when its marker does (as for
/// `blobd --backend s3://…`, so both see the same stores and blobs). The AWS configuration is
/// resolved from the environment and profile files the way the AWS CLI does.
package struct S3Backend: BlobBackend {
    /// The location, client and markers.
    package let setup: S3BackendSetup

    /// The backend at `location`, configured from `environment` (no request is sent yet). A
    /// location or configuration that cannot be used is a ``UsageError`` naming what is wrong.
    package init(location: String, environment: [String: String]) throws {
        do {
            setup = try S3BackendSetup(
                location: location, environment: AWSEnvironment(variables: environment, readFile: AWSEnvironment.process.readFile),
                checkBucket: false)
        } catch {
            throw UsageError("--backend: \(error)", command: nil)
        }
    }

    package var location: String { setup.backendName }

    /// The store; with `create`, its marker is written first (a put makes its store, as with the
    /// daemon), else a store without a marker is ``CLIError/storeNotFound(store:location:)``.
    package func store(_ name: String, create: Bool) async throws -> any BlobStoring {
        try StoreName.validate(name)
        let markers = setup.markers
        let exists = try await EmbeddedBackend.onDispatchThread {
            if create { try markers.create(name) }
            return create ? true : try markers.exists(name)
        }
        guard exists else { throw CLIError.storeNotFound(store: name, location: location) }
        return setup.store(name)
    }

    /// Whether the store's marker exists.
    package func storeExists(_ name: String) async throws -> Bool {
        let markers = setup.markers
        return try await EmbeddedBackend.onDispatchThread { try markers.exists(name) }
    }

    /// Every store with its totals (each a listing of its blobs).
    package func stores() async throws -> [StoreSummary] {
        let markers = setup.markers
        var result: [StoreSummary] = []
        for name in try await EmbeddedBackend.onDispatchThread({ try markers.names() }) {
            result.append(StoreSummary(name: name, statistics: try await setup.store(name).statistics()))
        }
        return result
    }

    /// Refused: S3 keeps no files of ours to check here; every read checks a blob's content against its ETag.
    package func verify(_ store: String?) async throws -> [StoreVerification] {
        throw UsageError("'verify' needs --root or the daemon: with --backend s3://… every read checks a blob against its ETag", command: "verify")
    }

    package func changes(_ store: String?, status: @escaping @Sendable (WatchStatus) -> Void) async throws -> AsyncStream<BlobChange> {
        throw UsageError("'watch' needs the daemon: with --backend s3://… only changes made by this same process could be seen", command: "watch")
    }
}
