import BlobStore
import Foundation

/// What `blobd --backend s3://…` and `blob --backend s3://…` set up before their first store: the
/// location, the AWS configuration resolved the way the AWS CLI resolves it, a client for the
/// bucket, and the stores' markers.
package struct S3BackendSetup: Sendable {
    /// Where the stores live.
    package let location: S3Location
    /// The endpoint, region and credentials.
    package let configuration: S3Configuration
    /// The client every store of this process shares (one connection pool).
    package let client: S3Client
    /// The stores' markers.
    package let markers: S3StoreMarkers

    /// Parses `location` (`s3://BUCKET[/PREFIX]`), resolves the configuration from `environment`
    /// and makes the client; with `checkBucket`, also sends one listing request to prove the
    /// endpoint answers, accepts the credentials and has the bucket. The client's timeouts and
    /// connection limits are `transport`'s. Throws ``S3BackendSetupError`` saying which step failed and why.
    package init(
        location text: String, environment: AWSEnvironment, checkBucket: Bool, transport: TransportConfiguration = TransportConfiguration()
    ) throws(S3BackendSetupError) {
        do {
            location = try S3Location(parsing: text)
        } catch {
            throw S3BackendSetupError(description: "\(error)")
        }
        do {
            configuration = try S3Configuration.resolve(environment: environment)
        } catch {
            throw S3BackendSetupError(description: "cannot use \(location): \(error)")
        }
        do {
            client = try S3Client(configuration: configuration, bucket: location.bucket, transport: HTTPTransport(configuration: transport))
        } catch {
            throw S3BackendSetupError(description: "cannot use \(location): \(error)")
        }
        markers = S3StoreMarkers(client: client, location: location)
        if checkBucket {
            do { try markers.checkBucket() } catch { throw S3BackendSetupError(description: error.description) }
        }
    }

    /// `s3://BUCKET/PREFIX at http://HOST:PORT`.
    package var backendName: String { markers.backendName }

    /// The store `name` (no I/O); content of large puts waits in `spoolFolder` (the temp folder when `nil`).
    package func store(_ name: String, spoolFolder: URL? = nil) -> S3BlobStore {
        S3BlobStore(name: name, client: client, layout: location.layout, spoolFolder: spoolFolder)
    }
}

/// An S3 backend cannot be set up: the location, the configuration, or the bucket check failed.
package struct S3BackendSetupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed and why, naming the location, the setting or the endpoint.
    package var description: String
}
