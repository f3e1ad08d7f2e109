import BlobStore
import BlobSystem
import Foundation
import S3BlobStore
import Testing

/// The store catalog on S3 (markers under `PREFIX/.stores/`) and the start-up check of a bucket:
/// against the gateway `.ci/ceph up` brings up (skipped without its env), and against an endpoint
/// where nothing listens.
@Suite struct CatalogTests {
    /// The gateway's configuration and bucket, from `DIR/env` of `.ci/ceph up`.
    static let gateway: (configuration: S3Configuration, bucket: String)? = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["AWS_ENDPOINT_URL"] != nil, let bucket = environment["BLOB_S3_BUCKET"],
              let configuration = try? S3Configuration.resolve()
        else { return nil }
        return (configuration, bucket)
    }()

    static func skipReason() -> String {
        "CatalogTests: skipped, no gateway (run .ci/ceph up DIR and source DIR/env for AWS_ENDPOINT_URL, the keys and BLOB_S3_BUCKET)"
    }

    /// Markers under a prefix of their own, so runs never see each other's stores.
    static func markers(pageSize: Int = 1000) throws -> S3StoreMarkers? {
        guard let (configuration, bucket) = gateway else { return nil }
        let client = try S3Client(configuration: configuration, bucket: bucket)
        return S3StoreMarkers(client: client, location: S3Location(bucket: bucket, prefix: "catalog-\(UUID().uuidString)"), pageSize: pageSize)
    }

    /// A client whose endpoint refuses connections (nothing listens on port 1 of loopback).
    static func unreachable(bucket: String = "blobstore-ci") throws -> S3StoreMarkers {
        let configuration = S3Configuration(
            credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret"), region: "us-east-1",
            endpoint: S3Endpoint(scheme: .http, host: "127.0.0.1", port: 1), addressingStyle: .path)
        return S3StoreMarkers(client: try S3Client(configuration: configuration, bucket: bucket), location: S3Location(bucket: bucket, prefix: "p"))
    }

    @Test func storesAreMarkersThatAreCreatedListedPagedAndNeverDiscarded() throws {
        guard let markers = try Self.markers(pageSize: 2) else { return print(Self.skipReason()) }
        let opened = Locked<[String]>([])
        let catalog = S3StoreCatalog(markers: markers, cache: nil) { name in
            opened.withLock { $0.append(name) }
            return try ReadCacheFakeStore(name: name)
        }
        #expect(try !catalog.storeExists("alpha"))
        #expect(try catalog.storeNames().isEmpty)
        let store = try catalog.openStore("alpha")
        #expect(store.name == "alpha" && opened.withLock { $0 } == ["alpha"])
        #expect(try catalog.storeExists("alpha"))
        #expect(try !markers.create("alpha"), "a second create finds the marker")
        #expect(try markers.create("gamma") && markers.create("beta"))
        // A key under the marker prefix that is not a store name is not a store.
        let client = markers.client
        let foreign = markers.location.layout.storeMarkerPrefix + "Not A Store"
        _ = try client.send(try client.bucket.putObject(key: foreign, payload: .emptyBody), context: client.bucket.context("PutObject", key: foreign))
        #expect(try catalog.storeNames() == ["alpha", "beta", "gamma"], "three pages of two keys, sorted")

        // Discarding the empty store a refused put opened keeps its marker: another member may be
        // storing a blob in it (docs/SCALE-OUT.md, "blobd and blob on S3").
        try catalog.discardStore("beta", store)
        #expect(try catalog.storeExists("beta"))
        #expect(try catalog.storeNames() == ["alpha", "beta", "gamma"])
        for key in [foreign] + ["alpha", "beta", "gamma"].map(markers.location.layout.storeMarkerKey(store:)) {
            _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
        }
    }

    @Test func aCatalogWithACacheServesItsStoresThroughIt() throws {
        guard let markers = try Self.markers() else { return print(Self.skipReason()) }
        let folder = ReadCacheFolder()
        defer { folder.remove() }
        let cache = try S3ReadCache(S3ReadCacheConfiguration(folder: folder.path))
        let catalog = S3StoreCatalog(markers: markers, cache: cache) { name in try ReadCacheFakeStore(name: name) }
        let store = try catalog.openStore("cached")
        #expect(store is S3CachedStore && store.name == "cached")
        // Discarding a store a refused put opened keeps its marker (a fleet member may be writing to it).
        try catalog.discardStore("cached", store)
        #expect(try catalog.storeExists("cached"))
    }

    @Test func anUnreachableEndpointIsBackendUnavailableNamingBucketAndEndpointNeverAMissingStore() throws {
        let markers = try Self.unreachable()
        let catalog = S3StoreCatalog(markers: markers, cache: nil) { name in try ReadCacheFakeStore(name: name) }
        for call in [{ _ = try catalog.storeExists("photos") }, { _ = try catalog.openStore("photos") }] as [() throws -> Void] {
            #expect {
                try call()
            } throws: { error in
                guard case BlobStoreError.backendUnavailable(let store, let backend, let reason) = error else { return false }
                return store == "photos" && backend == "s3://blobstore-ci/p at http://127.0.0.1:1" && reason.contains("no answer")
            }
        }
        #expect {
            try catalog.storeNames()
        } throws: { error in
            guard case BlobStoreError.backendUnavailable(_, let backend, _) = error else { return false }
            return backend.contains("s3://blobstore-ci/p") && backend.contains("127.0.0.1:1")
        }
        #expect {
            try markers.checkBucket()
        } throws: { error in
            "\(error)".contains("cannot reach the S3 endpoint http://127.0.0.1:1") && "\(error)".contains("s3://blobstore-ci/p")
        }
    }

    @Test func theStartCheckNamesAMissingBucketAndRefusedCredentials() throws {
        guard let (configuration, bucket) = Self.gateway else { return print(Self.skipReason()) }
        let good = S3StoreMarkers(client: try S3Client(configuration: configuration, bucket: bucket), location: S3Location(bucket: bucket))
        try good.checkBucket()

        let missing = S3StoreMarkers(
            client: try S3Client(configuration: configuration, bucket: "no-such-bucket-here"), location: S3Location(bucket: "no-such-bucket-here"))
        #expect {
            try missing.checkBucket()
        } throws: { error in
            "\(error)".contains("bucket 'no-such-bucket-here' does not exist at \(configuration.endpoint)") && "\(error)".contains("NoSuchBucket")
        }

        var wrong = configuration
        wrong.credentials = AWSCredentials(accessKeyID: configuration.credentials.accessKeyID, secretAccessKey: "not-the-secret")
        let refused = S3StoreMarkers(client: try S3Client(configuration: wrong, bucket: bucket), location: S3Location(bucket: bucket))
        #expect {
            try refused.checkBucket()
        } throws: { error in
            "\(error)".contains("refused the credentials") && "\(error)".contains("SignatureDoesNotMatch")
        }
    }

    /// A clock 20 minutes off (either way; 14 is accepted): the start check says so, naming
    /// the endpoint, the bucket and S3's code; a request after the start is `backendUnavailable`
    /// (`403`, with the code when the answer has a body), never "no such store" (docs/SCALE-OUT.md,
    /// "blobd and blob on S3").
    @Test(arguments: [20.0, -20.0])
    func theStartCheckNamesAClockTooFarOff(minutes: Double) throws {
        guard let (configuration, bucket) = Self.gateway else { return print(Self.skipReason()) }
        let offset = minutes * 60
        let client = try S3Client(configuration: configuration, bucket: bucket, clock: { Date().addingTimeInterval(offset) })
        let location = S3Location(bucket: bucket, prefix: "skew")
        let markers = S3StoreMarkers(client: client, location: location)
        #expect {
            try markers.checkBucket()
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("cannot use s3://\(bucket)/skew: \(configuration.endpoint) says this machine's clock is too far off; set the clock: ")
                && text.contains("ListObjectsV2 s3://\(bucket)/skew/.stores/ at \(configuration.endpoint): 403 RequestTimeTooSkewed")
        }
        #expect {
            try markers.names()
        } throws: { error in
            guard case BlobStoreError.backendUnavailable(_, let backend, let reason) = error else { return false }
            return backend == "s3://\(bucket)/skew at \(configuration.endpoint)" && reason.contains("403 RequestTimeTooSkewed")
        }
        // A HEAD's answer has no body, so no code: the status alone.
        #expect {
            try markers.exists("photos")
        } throws: { error in
            guard case BlobStoreError.backendUnavailable(let store, _, let reason) = error else { return false }
            return store == "photos" && reason.hasSuffix("HeadObject s3://\(bucket)/skew/.stores/photos at \(configuration.endpoint): 403 (no error code in the answer)")
        }
        // The offset alone was refused: 14 minutes off the same way is accepted.
        let nearly = minutes.sign == .minus ? -14.0 * 60 : 14.0 * 60
        let closeEnough = try S3Client(configuration: configuration, bucket: bucket, clock: { Date().addingTimeInterval(nearly) })
        try S3StoreMarkers(client: closeEnough, location: location).checkBucket()
    }

    @Test func locationsAreParsedWithReasons() throws {
        #expect(try S3Location(parsing: "s3://photos") == S3Location(bucket: "photos"))
        #expect(try S3Location(parsing: "s3://photos/") == S3Location(bucket: "photos"))
        let nested = try S3Location(parsing: "s3://my.bucket-1/fleet/a/")
        #expect(nested.bucket == "my.bucket-1" && nested.prefix == "fleet/a" && nested.description == "s3://my.bucket-1/fleet/a")
        #expect(nested.layout.storeMarkerKey(store: "x") == "fleet/a/.stores/x")
        for (text, reason) in [
            ("photos", "expected s3://BUCKET"), ("s3://", "is not a bucket name"), ("s3://Photos", "is not a bucket name"),
            ("s3://ab", "is not a bucket name"), ("s3://-ab", "is not a bucket name"), ("s3://bkt/a//b", "empty, '.' or '..' segment"),
            ("s3://bkt/a/../b", "empty, '.' or '..' segment"), ("s3://bkt/a\u{1}", "control character"),
        ] {
            #expect {
                _ = try S3Location(parsing: text)
            } throws: { error in
                "\(error)".contains("'\(text)' is not an S3 location") && "\(error)".contains(reason)
            }
        }
    }
}
