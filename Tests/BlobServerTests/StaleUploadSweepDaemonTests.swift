@testable import BlobServer
import BlobStore
import BlobSystem
import BlobTestSupport
import Foundation
import S3BlobStore
import Testing

/// blobd on S3 aborts its stores' abandoned multipart uploads at start and every period
/// (`--upload-sweep-age`, `--upload-sweep-period`; docs/SCALE-OUT.md, "Puts"), and a sweep that
/// fails never stops it. The gateway tests need `.ci/ceph up DIR` and DIR/env sourced.
@Suite struct StaleUploadSweepDaemonTests {
    static let variables: Set<String> = ["BLOBD_UPLOAD_SWEEP_AGE", "BLOBD_UPLOAD_SWEEP_PERIOD"]

    static var client: S3Client? {
        guard let target = S3Gateway.target else { return nil }
        return try? S3Client(configuration: target.configuration, bucket: target.bucket)
    }

    @Test func blobdAbortsItsStoresStaleUploadsAtStartAndEveryPeriod() async throws { try await onOwnThread { try Self().blobdAbortsItsStoresStaleUploadsAtStartAndEveryPeriodBlocking() } }

    func blobdAbortsItsStoresStaleUploadsAtStartAndEveryPeriodBlocking() throws {
        guard let client = Self.client, BlobdBinary.url != nil else { return print(S3DaemonTests.skipReason) }
        let location = try S3Location(parsing: S3DaemonTests.location(client.bucket.name))
        let other = try S3Location(parsing: S3DaemonTests.location(client.bucket.name))
        try S3StoreMarkers(client: client, location: location).create("notes")
        try S3StoreMarkers(client: client, location: other).create("notes")
        let stale = location.layout.blobKey(store: "notes", identifier: "stale")
        let noStore = location.layout.blobKey(store: "nostore", identifier: "x")
        let elsewhere = other.layout.blobKey(store: "notes", identifier: "y")
        var uploads = [stale: try Self.createUpload(stale, client), noStore: try Self.createUpload(noStore, client), elsewhere: try Self.createUpload(elsewhere, client)]
        defer { for (key, id) in uploads { Self.abortUpload(key, id, client) } }
        // Older than the age blobd is given (the gateway's clock is this machine's).
        Thread.sleep(forTimeInterval: 2.5)

        let folder = TempFolder()
        let daemon = try DaemonProcess(
            folder: folder,
            extraArguments: [
                "--backend", location.description, "--cache", folder.path + "/cache", "--events-listen", "off",
                "--upload-sweep-age", "2", "--upload-sweep-period", "1",
            ])
        defer { daemon.terminate() }
        #expect(Self.waitUntil { try !Self.unfinished(location, client).contains(stale) }, "the stale upload of store notes is aborted at start: \(daemon.log)")
        #expect(try Self.unfinished(location, client) == [noStore], "an upload under the location but outside every store is left alone")
        #expect(try Self.unfinished(other, client) == [elsewhere], "another location is left alone")
        #expect(daemon.log.contains("upload sweep of \(location) at \(client.bucket.endpoint): at start and every 1 s, aborting each store's unfinished multipart uploads initiated more than 2 s ago"), "\(daemon.log)")
        // Logged just after the abort, so the line may reach the log a moment after the upload is gone.
        #expect(Self.waitUntil { daemon.log.contains("aborted the unfinished multipart upload of s3://\(client.bucket.name)/\(stale)") }, "\(daemon.log)")
        uploads[stale] = nil

        // A later abandoned upload goes at a later round.
        let later = location.layout.blobKey(store: "notes", identifier: "later")
        uploads[later] = try Self.createUpload(later, client)
        #expect(Self.waitUntil { try !Self.unfinished(location, client).contains(later) }, "a later upload is aborted once it is older than the age: \(daemon.log)")
        uploads[later] = nil

        daemon.terminate()
        #expect(daemon.process.terminationStatus == 0 && daemon.log.contains("stopped"), "a clean stop: \(daemon.log)")
        #expect(!daemon.log.contains("sweep of \(location) at \(client.bucket.endpoint) failed"), "\(daemon.log)")
    }

    @Test func aSweepThatFailsIsLoggedOnceAndBlobdGoesOn() async throws { try await onOwnThread { try Self().aSweepThatFailsIsLoggedOnceAndBlobdGoesOnBlocking() } }

    func aSweepThatFailsIsLoggedOnceAndBlobdGoesOnBlocking() throws {
        guard let client = Self.client, let target = S3Gateway.target, BlobdBinary.url != nil else { return print(S3DaemonTests.skipReason) }
        let proxy = try FaultyGateway(upstreamURL: target.configuration.endpoint.description)
        defer { proxy.stop() }
        let location = try S3Location(parsing: S3DaemonTests.location(client.bucket.name))
        try S3StoreMarkers(client: client, location: location).create("notes")
        let stale = location.layout.blobKey(store: "notes", identifier: "stale")
        let uploadID = try Self.createUpload(stale, client)
        defer { Self.abortUpload(stale, uploadID, client) }

        // The age keeps the upload until the gateway is back; the rounds go on while it is down.
        let folder = TempFolder()
        let daemon = try Self.daemon(folder: folder, location: location, endpoint: proxy.url, arguments: ["--upload-sweep-age", "6", "--upload-sweep-period", "1"])
        defer { daemon.terminate() }
        proxy.inject(.down)
        let failed = "stale upload sweep of \(location) at \(proxy.url) failed: ListObjectsV2 s3://\(client.bucket.name)/\(location.prefix)/.stores/ at \(proxy.url): no answer"
        #expect(Self.waitUntil { daemon.log.contains(failed) }, "\(daemon.log)")
        // Several more rounds fail the same way. (A round under way when the proxy went down may
        // have failed at another request first, and been logged as a failure of its own.)
        let failures = "upload sweep of \(location) at \(proxy.url) failed"
        let logged = daemon.log.components(separatedBy: failures).count
        Thread.sleep(forTimeInterval: 3)
        #expect(daemon.process.isRunning, "blobd goes on")
        #expect(daemon.log.components(separatedBy: failures).count == logged, "logged once: \(daemon.log)")

        proxy.inject(.none)
        #expect(Self.waitUntil { try !Self.unfinished(location, client).contains(stale) }, "the gateway back, a later round aborts the upload: \(daemon.log)")
        #expect(daemon.log.contains("stale upload sweep of \(location) at \(proxy.url) works again"), "\(daemon.log)")
        let put = try daemon.connect().request("PUT", "/v1/stores/notes/blobs/a", body: Array("served".utf8))
        #expect(put.status == 201, "\(put.text)")
    }

    @Test func aPeriodOfZeroTurnsTheSweepOff() async throws { try await onOwnThread { try Self().aPeriodOfZeroTurnsTheSweepOffBlocking() } }

    func aPeriodOfZeroTurnsTheSweepOffBlocking() throws {
        guard let client = Self.client, BlobdBinary.url != nil else { return print(S3DaemonTests.skipReason) }
        let location = try S3Location(parsing: S3DaemonTests.location(client.bucket.name))
        let folder = TempFolder()
        let daemon = try Self.daemon(folder: folder, location: location, endpoint: nil, arguments: ["--upload-sweep-period", "0"])
        defer { daemon.terminate() }
        #expect(daemon.log.contains("upload sweep off: abandoned multipart uploads under \(location) stay until aborted otherwise"), "\(daemon.log)")
        #expect(!daemon.log.contains("upload sweep of s3://"), "\(daemon.log)")
    }

    @Test func theSettingsComeFromFlagsOrVariables() async throws { try await onOwnThread { try Self().theSettingsComeFromFlagsOrVariablesBlocking() } }

    func theSettingsComeFromFlagsOrVariablesBlocking() throws {
        guard case .run(let defaults) = DaemonCommandLine.parse(["--backend", "s3://photos"], environment: [:]) else {
            Issue.record("defaults refused")
            return
        }
        #expect(defaults.uploadSweep == UploadSweepOptions(ageSeconds: 604_800, periodSeconds: 3600))
        #expect(defaults.uploadSweep.schedule == S3StaleUploadSweeper.Schedule(age: S3StaleUploads.defaultAge, period: .seconds(3600)))
        guard case .run(let flags) = DaemonCommandLine.parse(["--backend", "s3://photos", "--upload-sweep-age", "86400", "--upload-sweep-period=0"], environment: [:]) else {
            Issue.record("flags refused")
            return
        }
        #expect(flags.uploadSweep == UploadSweepOptions(ageSeconds: 86_400, periodSeconds: 0) && flags.uploadSweep.schedule == nil)
        let environment = ["BLOBD_BACKEND": "s3://photos", "BLOBD_UPLOAD_SWEEP_AGE": "60", "BLOBD_UPLOAD_SWEEP_PERIOD": "30"]
        guard case .run(let variables) = DaemonCommandLine.parse(["--upload-sweep-period", "45"], environment: environment) else {
            Issue.record("variables refused")
            return
        }
        #expect(variables.uploadSweep == UploadSweepOptions(ageSeconds: 60, periodSeconds: 45), "a flag wins over its variable")

        let mistakes: [([String], [String: String], String)] = [
            (["--backend", "s3://photos", "--upload-sweep-age", "0"], [:], "--upload-sweep-age must be a whole number of seconds from 1 to 31536000"),
            (["--backend", "s3://photos", "--upload-sweep-age", "1.5"], [:], "--upload-sweep-age must be a whole number of seconds from 1 to 31536000"),
            (["--backend", "s3://photos"], ["BLOBD_UPLOAD_SWEEP_PERIOD": "-1"], "BLOBD_UPLOAD_SWEEP_PERIOD must be a whole number of seconds from 0 (never) to 31536000"),
            (["--upload-sweep-period", "60"], [:], "--upload-sweep-period is a setting of the S3 upload sweep: it needs --backend s3://BUCKET[/PREFIX]"),
        ]
        for (arguments, environment, message) in mistakes {
            guard case .usageError(let text) = DaemonCommandLine.parse(arguments, environment: environment) else {
                Issue.record("\(arguments) \(environment) was accepted")
                continue
            }
            #expect(text == message)
        }
        for variable in Self.variables {
            let flag = try #require(DaemonCommandLine.environmentVariables.first { $0.variable == variable }?.flag)
            #expect(DaemonCommandLine.usage.contains(flag) && DaemonCommandLine.usage.contains("env \(variable)"), "\(variable)")
        }
    }

    // MARK: Helpers

    static func daemon(folder: TempFolder, location: S3Location, endpoint: String?, arguments: [String]) throws -> DaemonProcess {
        var environment = ProcessInfo.processInfo.environment
        if let endpoint { environment["AWS_ENDPOINT_URL"] = endpoint }
        return try DaemonProcess(
            folder: folder, extraArguments: ["--backend", location.description, "--cache", folder.path + "/cache", "--events-listen", "off"] + arguments,
            environment: environment)
    }

    /// The keys of the unfinished uploads under `location`.
    static func unfinished(_ location: S3Location, _ client: S3Client) throws -> [String] {
        try S3StaleUploads(client: client, prefix: location.layout.keyPrefix).unfinished().map(\.key).sorted()
    }

    /// Polls `condition` for up to a minute.
    static func waitUntil(_ condition: () throws -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if (try? condition()) == true { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    static func createUpload(_ key: String, _ client: S3Client) throws -> String {
        let answer = try client.send(try client.bucket.createMultipartUpload(key: key), context: client.bucket.context("CreateMultipartUpload", key: key))
        return try S3InitiateMultipartUploadResult(xml: answer.body).uploadID
    }

    static func abortUpload(_ key: String, _ uploadID: String, _ client: S3Client) {
        guard let request = try? client.bucket.abortMultipartUpload(key: key, uploadID: uploadID) else { return }
        _ = try? client.send(request, context: client.bucket.context("AbortMultipartUpload", key: key), alsoAccepted: [404])
    }
}
