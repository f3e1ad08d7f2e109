import BlobSystem
import BlobTestSupport
import Foundation
import S3BlobStore
import Testing

/// The stale-upload sweep blobd runs (``S3StaleUploadSweeper``) against a real radosgw, when
/// `.ci/ceph up` has brought one up and its env file was sourced: what it aborts, when, and what a
/// round that fails does. Each test works under a location of its own.
@Suite struct StaleUploadSweepGatewayTests {
    static var client: S3Client? { MultipartGatewayTests.client }
    static let skipReason = "StaleUploadSweepGatewayTests: skipped, no http:// AWS_ENDPOINT_URL and BLOB_S3_BUCKET (run .ci/ceph up DIR and source DIR/env)"

    /// Collects the sweeper's log lines.
    final class Lines: Sendable {
        let lines = Locked<[(S3StaleUploadSweeper.Severity, String)]>([])
        var log: @Sendable (S3StaleUploadSweeper.Severity, String) -> Void { { severity, line in self.lines.withLock { $0.append((severity, line)) } } }
        var errors: [String] { lines.withLock { $0.filter { $0.0 == .error }.map(\.1) } }
        var infos: [String] { lines.withLock { $0.filter { $0.0 == .info }.map(\.1) } }
    }

    @Test func theFirstRoundAbortsExactlyTheStaleUploadsOfTheLocationsStores() async throws { try await onOwnThread { try Self().theFirstRoundAbortsExactlyTheStaleUploadsOfTheLocationsStoresBlocking() } }

    func theFirstRoundAbortsExactlyTheStaleUploadsOfTheLocationsStoresBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let location = Self.location(client)
        let other = Self.location(client)
        let markers = S3StoreMarkers(client: client, location: location)
        try markers.create("notes")
        try S3StoreMarkers(client: client, location: other).create("notes")
        let layout = location.layout
        let stale = layout.blobKey(store: "notes", identifier: "stale")
        let staleID = try MultipartGatewayTests.createUpload(stale, client)
        // Under the location but no store's: not the store's keys.
        let noStore = layout.blobKey(store: "nostore", identifier: "x")
        let noStoreID = try MultipartGatewayTests.createUpload(noStore, client)
        // Another location's store of the same name.
        let elsewhere = other.layout.blobKey(store: "notes", identifier: "y")
        let elsewhereID = try MultipartGatewayTests.createUpload(elsewhere, client)
        // This process's own upload, as S3MultipartUpload records it while it runs.
        let mine = layout.blobKey(store: "notes", identifier: "mine")
        let mineID = try MultipartGatewayTests.createUpload(mine, client)
        S3UploadsInProgress.begin(client, uploadID: mineID)
        defer { S3UploadsInProgress.end(client, uploadID: mineID) }
        let fresh = layout.blobKey(store: "notes", identifier: "fresh")
        let (freshID, cutoff) = try Self.freshUpload(fresh, after: [stale, noStore, mine], under: layout.keyPrefix, client)
        defer {
            for (key, id) in [(stale, staleID), (noStore, noStoreID), (elsewhere, elsewhereID), (mine, mineID), (fresh, freshID)] {
                try? MultipartGatewayTests.abortUpload(key, id, client)
            }
        }

        // The clock the age is measured with stands so that the cutoff falls between the stale
        // uploads and the fresh one.
        let age: Duration = .seconds(3600)
        let lines = Lines()
        let sweeper = S3StaleUploadSweeper(
            stores: markers, schedule: .init(age: age, period: .seconds(3600)), now: { cutoff.addingTimeInterval(3600) }, log: lines.log)
        sweeper.start()
        defer { sweeper.stop() }
        #expect(sweeper.waitForRounds(1, seconds: 120), "the first round runs at start")

        let left = try S3StaleUploads(client: client, prefix: layout.keyPrefix).unfinished()
        #expect(Set(left.map(\.uploadID)) == [noStoreID, mineID, freshID], "only the stale upload of the store is aborted: \(left)")
        #expect(try S3StaleUploads(client: client, prefix: other.layout.keyPrefix).unfinished().map(\.uploadID) == [elsewhereID], "another location is left alone")
        #expect(lines.errors.isEmpty, "\(lines.errors)")
        #expect(lines.infos.count == 1 && lines.infos.first?.contains("aborted the unfinished multipart upload of s3://\(client.bucket.name)/\(stale)") == true, "\(lines.infos)")
        #expect(lines.infos.first?.contains("stale upload sweep of s3://\(client.bucket.name)/\(location.prefix) at \(client.bucket.endpoint)") == true, "\(lines.infos)")
    }

    @Test func roundsRepeatEveryPeriodUntilStopped() async throws { try await onOwnThread { try Self().roundsRepeatEveryPeriodUntilStoppedBlocking() } }

    func roundsRepeatEveryPeriodUntilStoppedBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let location = Self.location(client)
        let markers = S3StoreMarkers(client: client, location: location)
        try markers.create("notes")
        let lines = Lines()
        // Every upload counts as stale: the clock is a day ahead and the age a second.
        let sweeper = S3StaleUploadSweeper(
            stores: markers, schedule: .init(age: .seconds(1), period: .milliseconds(200)), now: { Date().addingTimeInterval(86_400) }, log: lines.log)
        sweeper.start()
        defer { sweeper.stop() }
        #expect(sweeper.waitForRounds(1, seconds: 120))

        let key = location.layout.blobKey(store: "notes", identifier: "later")
        for _ in 0..<2 {
            let uploadID = try MultipartGatewayTests.createUpload(key, client)
            let rounds = sweeper.completedRounds
            // The round under way may have listed before the upload existed; the one after it has not.
            #expect(sweeper.waitForRounds(rounds + 2, seconds: 120), "a round follows every period")
            let left = try S3StaleUploads(client: client, prefix: location.layout.keyPrefix).unfinished()
            #expect(!left.contains { $0.uploadID == uploadID }, "an upload made after the first round is aborted by a later one")
        }
        sweeper.stop()
        let stopped = sweeper.completedRounds
        let uploadID = try MultipartGatewayTests.createUpload(key, client)
        defer { try? MultipartGatewayTests.abortUpload(key, uploadID, client) }
        Thread.sleep(forTimeInterval: 1)
        #expect(sweeper.completedRounds == stopped, "no round after stop")
        #expect(try S3StaleUploads(client: client, prefix: location.layout.keyPrefix).unfinished().map(\.uploadID) == [uploadID])
        #expect(lines.errors.isEmpty, "\(lines.errors)")
    }

    @Test func aGatewayThatIsDownFailsTheRoundsQuietlyUntilItIsBack() async throws { try await onOwnThread { try Self().aGatewayThatIsDownFailsTheRoundsQuietlyUntilItIsBackBlocking() } }

    func aGatewayThatIsDownFailsTheRoundsQuietlyUntilItIsBackBlocking() throws {
        guard let client = Self.client, let target = S3Gateway.target else { return print(Self.skipReason) }
        let location = Self.location(client)
        try S3StoreMarkers(client: client, location: location).create("notes")
        let key = location.layout.blobKey(store: "notes", identifier: "stale")
        let uploadID = try MultipartGatewayTests.createUpload(key, client)
        defer { try? MultipartGatewayTests.abortUpload(key, uploadID, client) }

        let proxy = try FaultyGateway(upstreamURL: target.configuration.endpoint.description)
        defer { proxy.stop() }
        proxy.inject(.down)
        var variables = ProcessInfo.processInfo.environment
        variables["AWS_ENDPOINT_URL"] = proxy.url
        let configuration = try S3Configuration.resolve(environment: AWSEnvironment(variables: variables, readFile: AWSEnvironment.process.readFile))
        let proxied = try S3Client(configuration: configuration, bucket: client.bucket.name)
        let lines = Lines()
        let sweeper = S3StaleUploadSweeper(
            stores: S3StoreMarkers(client: proxied, location: location), schedule: .init(age: .seconds(1), period: .milliseconds(100)),
            now: { Date().addingTimeInterval(86_400) }, log: lines.log)
        sweeper.start()
        defer { sweeper.stop() }
        #expect(sweeper.waitForRounds(3, seconds: 120), "rounds go on after failing")
        #expect(try S3StaleUploads(client: client, prefix: location.layout.keyPrefix).unfinished().map(\.uploadID) == [uploadID])
        let errors = lines.errors
        #expect(errors.count == 1, "a failure is logged once while it repeats: \(errors)")
        let error = errors.first ?? ""
        #expect(error.hasPrefix("stale upload sweep of s3://\(client.bucket.name)/\(location.prefix) at \(proxy.url) failed: "), "\(error)")
        #expect(error.contains("ListObjectsV2 s3://\(client.bucket.name)/\(location.prefix)/.stores/ at \(proxy.url): no answer"), "\(error)")
        #expect(error.contains("tried again in 0.1 s"), "\(error)")

        proxy.inject(.none)
        let rounds = sweeper.completedRounds
        #expect(sweeper.waitForRounds(rounds + 2, seconds: 120))
        #expect(try S3StaleUploads(client: client, prefix: location.layout.keyPrefix).unfinished().isEmpty, "the gateway back, the next round aborts the upload")
        #expect(lines.infos.contains("stale upload sweep of s3://\(client.bucket.name)/\(location.prefix) at \(proxy.url) works again"), "\(lines.infos)")
        #expect(lines.errors.count == 1)
    }

    @Test func aRefusedListingNamesTheS3ErrorCode() async throws { try await onOwnThread { try Self().aRefusedListingNamesTheS3ErrorCodeBlocking() } }

    func aRefusedListingNamesTheS3ErrorCodeBlocking() throws {
        guard let client = Self.client, let target = S3Gateway.target else { return print(Self.skipReason) }
        var variables = ProcessInfo.processInfo.environment
        variables["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let configuration = try S3Configuration.resolve(environment: AWSEnvironment(variables: variables, readFile: AWSEnvironment.process.readFile))
        let refused = try S3Client(configuration: configuration, bucket: client.bucket.name)
        let prefix = Self.location(client).layout.blobPrefix(store: "notes")
        let lines = Lines()
        let sweeper = S3StaleUploadSweeper(client: refused, location: "the test's location", log: lines.log) { [prefix] }
        let first = sweeper.sweep()
        let second = sweeper.sweep()
        let failure = try #require(first.failure)
        #expect(failure.contains("ListMultipartUploads s3://\(client.bucket.name)/\(prefix) at \(target.configuration.endpoint): 403 SignatureDoesNotMatch"), "\(failure)")
        #expect(second.failure != nil && first.aborted.isEmpty)
        #expect(lines.errors.count == 1 && lines.errors.first?.contains("403 SignatureDoesNotMatch") == true, "\(lines.errors)")
    }

    @Test func requestIDsDoNotMakeAFailureNew() {
        #expect(S3StaleUploadSweeper.withoutRequestIDs("A: 403 AccessDenied (no) [request tx1-a]; then [request tx2]") == "A: 403 AccessDenied (no); then")
        #expect(S3StaleUploadSweeper.withoutRequestIDs("no brackets [request open") == "no brackets [request open")
    }

    // MARK: Helpers

    static func location(_ client: S3Client) -> S3Location {
        S3Location(bucket: client.bucket.name, prefix: "sweep-tests/\(UUID().uuidString.prefix(12).lowercased())")
    }

    /// Starts an upload of `key` whose `Initiated` time is strictly later than those of `earlier`
    /// (all under `prefix`), and returns its ID and a time between the two.
    static func freshUpload(_ key: String, after earlier: [String], under prefix: String, _ client: S3Client) throws -> (String, Date) {
        while true {
            Thread.sleep(forTimeInterval: 0.05)
            let uploadID = try MultipartGatewayTests.createUpload(key, client)
            let uploads = try S3StaleUploads(client: client, prefix: prefix).unfinished()
            let latest = uploads.filter { earlier.contains($0.key) }.compactMap(\.initiated).max()
            if let latest, let at = uploads.first(where: { $0.uploadID == uploadID })?.initiated, latest < at {
                return (uploadID, latest.addingTimeInterval(at.timeIntervalSince(latest) / 2))
            }
            try MultipartGatewayTests.abortUpload(key, uploadID, client)
        }
    }
}
