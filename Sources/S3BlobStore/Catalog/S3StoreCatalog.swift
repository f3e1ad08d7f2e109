import BlobStore
import Foundation

/// The stores under an `s3://BUCKET[/PREFIX]` location, as blobd serves them
/// (``S3StoreLayout``): store `NAME` exists when its marker object `PREFIX/.stores/NAME` does
/// (``S3StoreMarkers``).
///
/// Opening a store writes its marker if absent and makes the store with `makeStore` (injectable, so
/// the catalog works with any store that reads conditionally), read through `cache` when there is
/// one. Every call may block on the network: a server makes them on its blocking-work threads. Any
/// failure to ask the object store is ``BlobStoreError/backendUnavailable(store:backend:reason:)``
/// naming the bucket and endpoint, never "no such store".
package struct S3StoreCatalog: ServedBackendCatalog {
    /// Makes the store `name` (its blobs under `PREFIX/NAME/`).
    package typealias StoreFactory = @Sendable (_ name: String) throws -> any ServedBackend & S3ConditionalReading

    /// The store markers.
    package let markers: S3StoreMarkers
    /// The daemon's read cache, or `nil` to read from the object store every time.
    package let cache: S3ReadCache?
    private let makeStore: StoreFactory

    /// A catalog of the stores `markers` records, each made by `makeStore`.
    package init(markers: S3StoreMarkers, cache: S3ReadCache?, makeStore: @escaping StoreFactory) {
        self.markers = markers
        self.cache = cache
        self.makeStore = makeStore
    }

    /// Whether the store's marker exists.
    package func storeExists(_ name: String) throws -> Bool { try markers.exists(name) }

    /// Writes the store's marker unless it exists (create-only, so concurrent daemons creating one
    /// store agree), then makes the store, read through the cache if there is one.
    package func openStore(_ name: String) throws -> any ServedBackend {
        try markers.create(name)
        let store = try makeStore(name)
        guard let cache else { return store }
        return S3CachedStore(store, cache: cache)
    }

    /// Keeps the marker of a store a refused first put created: the store stays, empty. Deleting it
    /// cannot be made safe in a fleet: between a check that the store is empty and the delete,
    /// another member that found the marker may store a blob and acknowledge it, in a store that
    /// no member would then find.
    package func discardStore(_ name: String, _ backend: any ServedBackend) throws {}

    /// The stores whose markers exist, sorted byte-wise.
    package func storeNames() throws -> [String] { try markers.names() }

    /// Nobody holds an S3 store: the object store arbitrates between daemons itself.
    package func otherHolders(of names: [String]) -> [String: String] { [:] }

    /// A put's commit waits for the gateway's answer.
    package var commitsWaitForAnotherService: Bool { true }
}

/// The objects that say which stores exist under an `s3://BUCKET[/PREFIX]` location: store `NAME`
/// exists when `PREFIX/.stores/NAME` does (``S3StoreLayout``). Used by blobd's catalog and by `blob`
/// on S3. Blocking: every call is one or a few S3 requests. Any failure to ask the object store is
/// ``BlobStoreError/backendUnavailable(store:backend:reason:)`` naming the bucket and endpoint.
package struct S3StoreMarkers: Sendable {
    /// Sends the requests.
    package let client: S3Client
    /// Where the stores are.
    package let location: S3Location
    /// Keys per listing page (S3's most, 1,000, unless a test asks for fewer).
    package let pageSize: Int

    /// The markers of `location`, reached with `client` (whose bucket must be `location`'s).
    package init(client: S3Client, location: S3Location, pageSize: Int = S3Bucket.maximumKeysPerPage) {
        precondition(client.bucket.name == location.bucket, "the client's bucket must be the location's")
        self.client = client
        self.location = location
        self.pageSize = pageSize
    }

    /// `s3://BUCKET/PREFIX at http://HOST:PORT`: how errors name the backend.
    package var backendName: String { "\(location) at \(client.bucket.endpoint)" }

    private var layout: S3StoreLayout { location.layout }

    /// The store name errors about the catalog as a whole (listing the stores) give.
    static let everyStore = "(every store)"

    /// Runs `body`, turning whatever the object store did wrong into `backendUnavailable` for `store`.
    private func asking<T>(_ store: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as S3ClientError {
            throw BlobStoreError.backendUnavailable(store: store, backend: backendName, reason: error.description)
        } catch let error as S3ResponseParseError {
            throw BlobStoreError.backendUnavailable(store: store, backend: backendName, reason: "an answer did not parse: \(error)")
        }
    }

    /// Whether the marker `PREFIX/.stores/NAME` exists (HeadObject: `200` yes, `404` no; anything else throws).
    package func exists(_ name: String) throws -> Bool {
        let key = layout.storeMarkerKey(store: name)
        return try asking(name) {
            let response = try client.send(
                try request { () throws(S3RequestError) in try client.bucket.headObject(key: key) }, context: client.bucket.context("HeadObject", key: key),
                alsoAccepted: [404])
            return response.status.code != 404
        }
    }

    /// Writes `name`'s marker with `If-None-Match: *`; returns whether this call created it.
    @discardableResult
    package func create(_ name: String) throws -> Bool {
        guard try !exists(name) else { return false }
        let key = layout.storeMarkerKey(store: name)
        return try asking(name) {
            let response = try client.send(
                try request { () throws(S3RequestError) in
                    try client.bucket.putObject(key: key, payload: .emptyBody, condition: .ifNoneMatchAny)
                },
                context: client.bucket.context("PutObject", key: key), alsoAccepted: [412], isIdempotent: false)
            return response.status.code != 412
        }
    }

    /// The names under `PREFIX/.stores/`, every page, sorted byte-wise; keys that are not valid store names are skipped.
    package func names() throws -> [String] {
        let prefix = layout.storeMarkerPrefix
        var names: [String] = []
        var token: String?
        try asking(Self.everyStore) {
            repeat {
                let response = try client.send(
                    try request { () throws(S3RequestError) in try client.bucket.listObjects(prefix: prefix, continuationToken: token, maxKeys: pageSize) },
                    context: client.bucket.context("ListObjectsV2", key: prefix))
                let page = try S3ListObjectsPage(xml: response.body)
                for object in page.objects {
                    let name = String(decoding: object.key.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
                    if StoreName.violation(in: name) == nil { names.append(name) }
                }
                token = page.isTruncated ? page.nextContinuationToken : nil
            } while token != nil
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// One request that lists at most one key under the location: proves the endpoint answers, the
    /// credentials are accepted and the bucket exists. Throws ``S3BackendCheckError`` saying which
    /// of those failed, for a daemon or command to stop at once with it.
    package func checkBucket() throws(S3BackendCheckError) {
        let prefix = layout.storeMarkerPrefix
        do {
            _ = try client.send(
                try request { () throws(S3RequestError) in try client.bucket.listObjects(prefix: prefix, maxKeys: 1) },
                context: client.bucket.context("ListObjectsV2", key: prefix))
        } catch {
            throw S3BackendCheckError(location: location, endpoint: client.bucket.endpoint.description, error: error)
        }
    }

    private func request(_ build: () throws(S3RequestError) -> S3Request) throws(S3ClientError) -> S3Request {
        do { return try build() } catch { throw .refused(error) }
    }
}

/// The object store behind an `s3://` location cannot be used: it does not answer, refuses the
/// credentials, or has no such bucket. Says which, with the endpoint, bucket and S3's error code.
package struct S3BackendCheckError: Error, Sendable, CustomStringConvertible {
    /// The location checked.
    package var location: S3Location
    /// The endpoint asked.
    package var endpoint: String
    /// What the request met.
    package var error: S3ClientError

    /// What is wrong, and what to check.
    package var description: String {
        let what: String
        switch error.code {
        case "NoSuchBucket"?:
            what = "bucket '\(location.bucket)' does not exist at \(endpoint); create it first"
        case "InvalidAccessKeyId"?, "SignatureDoesNotMatch"?, "AccessDenied"?:
            what = "\(endpoint) refused the credentials for bucket '\(location.bucket)' (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or the profile)"
        case "RequestTimeTooSkewed"?:
            what = "\(endpoint) says this machine's clock is too far off; set the clock"
        default:
            if case .unreachable = error {
                what = "cannot reach the S3 endpoint \(endpoint) (check AWS_ENDPOINT_URL, or that the object store is running)"
            } else {
                what = "\(endpoint) did not accept a listing of bucket '\(location.bucket)'"
            }
        }
        return "cannot use \(location): \(what): \(error)"
    }
}
