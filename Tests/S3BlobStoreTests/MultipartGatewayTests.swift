import BlobSystem
import BlobTestSupport
import Foundation
import S3BlobStore
import Testing

/// Multipart uploads and the stale-upload sweep against a real radosgw, when `.ci/ceph up` has
/// brought one up and its env file was sourced. Each test works under a key prefix of its own, so
/// "no unfinished upload" is checked where no other test uploads.
@Suite struct MultipartGatewayTests {
    static let client: S3Client? = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["AWS_ENDPOINT_URL"]?.lowercased().hasPrefix("http://") == true, let bucket = environment["BLOB_S3_BUCKET"],
            let configuration = try? S3Configuration.resolve()
        else { return nil }
        return try? S3Client(configuration: configuration, bucket: bucket)
    }()

    static let skipReason = "MultipartGatewayTests: skipped, no http:// AWS_ENDPOINT_URL and BLOB_S3_BUCKET (run .ci/ceph up DIR and source DIR/env)"

    @Test func aTwelveMebibyteFileInFiveMebibytePartsRoundTripsByteExact() async throws { try await onOwnThread { try Self().aTwelveMebibyteFileInFiveMebibytePartsRoundTripsByteExactBlocking() } }

    func aTwelveMebibyteFileInFiveMebibytePartsRoundTripsByteExactBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let key = prefix + "twelve"
        let file = try PatternFile(length: 12 << 20)
        defer { file.remove() }
        var upload = S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(contentType: "application/x-test"), partSize: 5 << 20)
        let parts = Locked<[Int]>([])
        upload.beforePart = { number in parts.withLock { $0.append(number) } }
        let etag = try upload.upload(file: file.descriptor, length: file.length)

        #expect(parts.withLock { $0.sorted() } == [1, 2, 3], "12 MiB in 5 MiB parts is three parts")
        #expect(etag.hasSuffix("-3"), "a multipart object's ETag ends in its part count, got \(etag)")
        #expect(!etag.hasPrefix("\""))
        let got = try client.send(try client.bucket.getObject(key: key), context: client.bucket.context("GetObject", key: key), responseLimit: 13 << 20)
        #expect(got.headers.first(name: "ETag").map(S3XMLValues.unquotedETag) == etag, "the ETag returned is the stored object's")
        #expect(got.headers.first(name: "Content-Type") == "application/x-test")
        #expect(got.body.count == 12 << 20)
        #expect(got.body == file.contents, "byte-exact")
        try Self.remove(key, client)
        #expect(try S3StaleUploads(client: client, prefix: prefix).unfinished().isEmpty)
    }

    @Test func aFileShorterThanClaimedFailsClearlyAndLeavesNoUnfinishedUpload() async throws { try await onOwnThread { try Self().aFileShorterThanClaimedFailsClearlyAndLeavesNoUnfinishedUploadBlocking() } }

    func aFileShorterThanClaimedFailsClearlyAndLeavesNoUnfinishedUploadBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let key = prefix + "short"
        let file = try PatternFile(length: 6 << 20)
        defer { file.remove() }
        let upload = S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(), partSize: 5 << 20, concurrency: 1)
        do {
            _ = try upload.upload(file: file.descriptor, length: 12 << 20)
            Issue.record("an upload of 12 MiB from a 6 MiB file succeeded")
        } catch {
            let text = error.description
            #expect(text.contains("UploadPart"), "names the operation: \(text)")
            #expect(text.contains("s3://\(client.bucket.name)/\(key)"), "names the bucket and key: \(text)")
            #expect(text.contains(client.bucket.endpoint.description), "names the endpoint: \(text)")
            #expect(text.contains("the file ended"), "says why: \(text)")
        }
        #expect(try S3StaleUploads(client: client, prefix: prefix).unfinished().isEmpty, "the failed upload was aborted")
        #expect(throws: S3ClientError.self) { try client.send(try client.bucket.headObject(key: key), context: client.bucket.context("HeadObject", key: key)) }
    }

    @Test func aFailingPartAbortsTheUploadAndRethrowsItsError() async throws { try await onOwnThread { try Self().aFailingPartAbortsTheUploadAndRethrowsItsErrorBlocking() } }

    func aFailingPartAbortsTheUploadAndRethrowsItsErrorBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let key = prefix + "injected"
        let file = try PatternFile(length: 12 << 20)
        defer { file.remove() }
        var upload = S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(), partSize: 5 << 20)
        let injected = S3ClientError.malformedAnswer(client.bucket.context("UploadPart", key: key), reason: "injected failure of part 2")
        upload.beforePart = { number throws(S3ClientError) in
            if number == 2 { throw injected }
        }
        do {
            _ = try upload.upload(file: file.descriptor, length: file.length)
            Issue.record("the upload succeeded despite a failing part")
        } catch {
            #expect(error.description.contains("injected failure of part 2"))
        }
        #expect(try S3StaleUploads(client: client, prefix: prefix).unfinished().isEmpty, "the failed upload was aborted")
    }

    @Test func aCancelledUploadIsAbortedBetweenParts() async throws { try await onOwnThread { try Self().aCancelledUploadIsAbortedBetweenPartsBlocking() } }

    func aCancelledUploadIsAbortedBetweenPartsBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let key = prefix + "cancelled"
        let file = try PatternFile(length: 12 << 20)
        defer { file.remove() }
        let cancellation = S3UploadCancellation()
        var upload = S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(), partSize: 5 << 20, concurrency: 1)
        let started = Locked<[Int]>([])
        upload.beforePart = { number in
            started.withLock { $0.append(number) }
            cancellation.cancel()
        }
        do {
            _ = try upload.upload(file: file.descriptor, length: file.length, cancellation: cancellation)
            Issue.record("a cancelled upload succeeded")
        } catch {
            #expect(error.description.contains("cancelled by the caller after 1 of 3 parts"), "\(error)")
        }
        #expect(started.withLock { $0 } == [1], "no part starts after the cancellation")
        #expect(try S3StaleUploads(client: client, prefix: prefix).unfinished().isEmpty, "the cancelled upload was aborted")
    }

    @Test func partsRunConcurrently() async throws { try await onOwnThread { try Self().partsRunConcurrentlyBlocking() } }

    func partsRunConcurrentlyBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let key = prefix + "concurrent"
        let file = try PatternFile(length: 16 << 20)
        defer { file.remove() }
        var upload = S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(), partSize: 5 << 20, concurrency: 4)
        // Each of the four parts waits until all four have started: sequential parts would never
        // get past the first (it gives up after a minute and fails the upload).
        let barrier = Barrier(parties: 4)
        upload.beforePart = { number throws(S3ClientError) in
            guard barrier.arriveAndWait(seconds: 60) else {
                throw .malformedAnswer(client.bucket.context("UploadPart", key: key), reason: "part \(number) waited a minute for the other three")
            }
        }
        let etag = try upload.upload(file: file.descriptor, length: file.length)
        #expect(etag.hasSuffix("-4"))
        #expect(barrier.mostWaiting == 4, "four parts were in flight at once")
        try Self.remove(key, client)
    }

    @Test func theSweepAbortsAnAbandonedUploadAndLeavesAFreshOneAlone() async throws { try await onOwnThread { try Self().theSweepAbortsAnAbandonedUploadAndLeavesAFreshOneAloneBlocking() } }

    func theSweepAbortsAnAbandonedUploadAndLeavesAFreshOneAloneBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let sweep = S3StaleUploads(client: client, prefix: prefix)
        let abandoned = try Self.createUpload(prefix + "abandoned", client)
        var fresh: String
        var uploads: [S3MultipartUploadSummary]
        // The gateway's Initiated times have a finite resolution: start the fresh upload until it is
        // strictly later than the abandoned one.
        repeat {
            Thread.sleep(forTimeInterval: 0.05)
            fresh = try Self.createUpload(prefix + "fresh", client)
            uploads = try sweep.unfinished()
            let times = Dictionary(uploads.map { ($0.uploadID, $0.initiated) }, uniquingKeysWith: { first, _ in first })
            if let a = times[abandoned] ?? nil, let f = times[fresh] ?? nil, a < f { break }
            try Self.abortUpload(prefix + "fresh", fresh, client)
        } while true
        let abandonedAt = try #require(uploads.first { $0.uploadID == abandoned }?.initiated)
        let freshAt = try #require(uploads.first { $0.uploadID == fresh }?.initiated)
        let cutoff = abandonedAt.addingTimeInterval(freshAt.timeIntervalSince(abandonedAt) / 2)

        let aborted = try sweep.abort(initiatedBefore: cutoff)
        #expect(aborted.map(\.uploadID) == [abandoned])
        #expect(aborted.first?.key == prefix + "abandoned")
        #expect(try sweep.unfinished().map(\.uploadID) == [fresh], "the fresh upload is left alone")
        #expect(try S3StaleUploads(client: client, prefix: prefix + "elsewhere/").abort(initiatedBefore: Date().addingTimeInterval(3600)).isEmpty, "only the prefix is swept")
        try Self.abortUpload(prefix + "fresh", fresh, client)
        #expect(try sweep.unfinished().isEmpty)
    }

    @Test func anUploadAbortedByAnotherProcessFailsAndStoresNothing() async throws { try await onOwnThread { try Self().anUploadAbortedByAnotherProcessFailsAndStoresNothingBlocking() } }

    func anUploadAbortedByAnotherProcessFailsAndStoresNothingBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let key = prefix + "swept"
        let file = try PatternFile(length: 12 << 20)
        defer { file.remove() }
        var upload = S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(), partSize: 5 << 20, concurrency: 1)
        // Before part 2, the upload is aborted as another fleet member's sweep would abort it.
        upload.beforePart = { number throws(S3ClientError) in
            guard number == 2 else { return }
            let uploads = try S3StaleUploads(client: client, prefix: prefix).unfinished()
            for found in uploads {
                _ = try client.send(
                    try Self.built { () throws(S3RequestError) in try client.bucket.abortMultipartUpload(key: found.key, uploadID: found.uploadID) },
                    context: client.bucket.context("AbortMultipartUpload", key: found.key))
            }
        }
        do {
            _ = try upload.upload(file: file.descriptor, length: file.length)
            Issue.record("an aborted upload completed")
        } catch {
            #expect(error.code == "NoSuchUpload" && error.description.contains("404 NoSuchUpload"), "\(error)")
        }
        #expect(throws: S3ClientError.self, "nothing is stored") { try client.send(try client.bucket.headObject(key: key), context: client.bucket.context("HeadObject", key: key)) }
        #expect(try S3StaleUploads(client: client, prefix: prefix).unfinished().isEmpty)
    }

    @Test func thisProcessesOwnUploadIsNeverSweptWhateverItsAge() async throws { try await onOwnThread { try Self().thisProcessesOwnUploadIsNeverSweptWhateverItsAgeBlocking() } }

    func thisProcessesOwnUploadIsNeverSweptWhateverItsAgeBlocking() throws {
        guard let client = Self.client else { return print(Self.skipReason) }
        let prefix = Self.uniquePrefix()
        let key = prefix + "mine"
        let file = try PatternFile(length: 12 << 20)
        defer { file.remove() }
        var upload = S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(), partSize: 5 << 20, concurrency: 1)
        let swept = Locked<[S3MultipartUploadSummary]?>(nil)
        let seen = Locked<[S3MultipartUploadSummary]>([])
        upload.beforePart = { number throws(S3ClientError) in
            guard number == 2 else { return }
            let sweep = S3StaleUploads(client: client, prefix: prefix)
            let unfinished = try sweep.unfinished()
            let aborted = try sweep.abortAbandoned(olderThan: .zero, now: Date().addingTimeInterval(86_400))
            seen.withLock { $0 = unfinished }
            swept.withLock { $0 = aborted }
        }
        let etag = try upload.upload(file: file.descriptor, length: file.length)
        #expect(seen.withLock { $0 }.map(\.key) == [key], "the sweep saw the upload")
        #expect(swept.withLock { $0 } == [], "and left it alone")
        #expect(etag.hasSuffix("-3"), "it completed")
        try Self.remove(key, client)
    }

    // MARK: Helpers

    static func built<T>(_ body: () throws(S3RequestError) -> T) throws(S3ClientError) -> T {
        do { return try body() } catch { throw .refused(error) }
    }

    static func uniquePrefix() -> String { "multipart-tests/\(UUID().uuidString)/" }

    static func remove(_ key: String, _ client: S3Client) throws {
        _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
    }

    static func createUpload(_ key: String, _ client: S3Client) throws -> String {
        let context = client.bucket.context("CreateMultipartUpload", key: key)
        let answer = try client.send(try client.bucket.createMultipartUpload(key: key), context: context)
        return try S3InitiateMultipartUploadResult(xml: answer.body).uploadID
    }

    static func abortUpload(_ key: String, _ uploadID: String, _ client: S3Client) throws {
        _ = try client.send(try client.bucket.abortMultipartUpload(key: key, uploadID: uploadID), context: client.bucket.context("AbortMultipartUpload", key: key))
    }
}

/// A temporary file of patterned bytes, open for reading.
struct PatternFile {
    let path: String
    let descriptor: FileDescriptor
    let length: Int64
    let contents: [UInt8]

    init(length: Int) throws {
        path = NSTemporaryDirectory() + "s3-multipart-\(UUID().uuidString)"
        contents = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            for index in 0..<length { buffer[index] = UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 13) }
            count = length
        }
        try Data(contents).write(to: URL(fileURLWithPath: path))
        descriptor = try FileDescriptor.open(path, .readOnly)
        self.length = Int64(length)
    }

    func remove() {
        try? descriptor.close()
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Lets `parties` threads through together, counting how many waited at once.
final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var waiting = 0
    private var most = 0

    init(parties: Int) { self.parties = parties }

    /// Waits until `parties` threads have arrived (at once for later ones); false after `seconds`.
    func arriveAndWait(seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        waiting += 1
        most = max(most, waiting)
        defer { waiting -= 1 }
        if arrived >= parties {
            condition.broadcast()
            return true
        }
        let deadline = Date().addingTimeInterval(seconds)
        while arrived < parties {
            if !condition.wait(until: deadline) { return arrived >= parties }
        }
        return true
    }

    /// The most threads inside at once.
    var mostWaiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return most
    }
}
