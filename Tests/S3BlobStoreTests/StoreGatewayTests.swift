import BlobStore
import BlobSystem
import BlobTestSupport
import Foundation
@testable import S3BlobStore
import Testing

/// What the behaviour suite does not cover of ``S3BlobStore``, against the `.ci/ceph` gateway
/// (skipped with a printed reason without one): the metadata header through the gateway, foreign
/// and damaged objects, the created-keeping race, the key limit, a put's expiry, blobd's calls.
@Suite struct StoreGatewayTests {
    /// Writes `content` at `key` directly, with `metadata` as the `x-amz-meta-blob` header (none when `nil`).
    static func writeRaw(_ store: S3BlobStore, key: String, content: [UInt8], metadata: String?) throws {
        let headers = S3ObjectHeaders(contentType: "application/x-other", metadata: metadata.map { [S3HeaderField("blob", $0)] } ?? [])
        let request = try store.client.bucket.putObject(key: key, payload: .unsigned, headers: headers)
        _ = try store.client.send(request, body: .bytes(content), context: store.client.bucket.context("PutObject", key: key))
    }

    @Test func hostileUserMetadataAndContentTypesComeBackExactly() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let metadata = ["x-y_z": " ü v", "trailing": "v  ", "k": "%41 \"q\" \\ {}", "e": "", "emoji": "🦊  two  spaces"]
        let put = try await store.put(Data("hello".utf8), identifier: "doc", options: PutOptions(contentType: "text/x; a=\"b c\"", userMetadata: metadata))
        #expect(put.userMetadata == metadata)
        #expect(try await store.head("doc") == put)
        #expect(try await store.list(ListQuery()).items == [put])
        // A second instance (no hints) reads the same from the object alone.
        let other = S3BlobStore(name: store.name, client: store.client, layout: store.layout)
        #expect(try await other.head("doc") == put)
    }

    /// Content above the store's multipart threshold goes up as a multipart upload (its S3 ETag
    /// ends in `-PARTS`), streamed from the spool file; it reads back exactly, an overwrite keeps
    /// `created`, and the put's condition is still checked.
    @Test func contentAboveTheThresholdIsAMultipartUploadAndReadsBackExactly() async throws {
        guard let base = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let store = S3BlobStore(name: base.name, client: base.client, layout: base.layout, multipartThreshold: 6 << 20)
        let content = pseudoRandomBytes(13 << 20, seed: 41)
        let chunks = stride(from: 0, to: content.count, by: 1 << 20).map { content.subdata(in: $0..<min($0 + (1 << 20), content.count)) }
        let first = try await store.put(chunks: chunkStream(chunks), identifier: "big", options: PutOptions())
        #expect(try await store.get("big") == content)
        let key = store.layout.blobKey(store: store.name, identifier: "big")
        let head = try store.client.send(try store.client.bucket.headObject(key: key), context: store.client.bucket.context("HeadObject", key: key))
        let objectETag = (head.headers.first(name: "etag") ?? "").replacingOccurrences(of: "\"", with: "")
        #expect(objectETag.split(separator: "-").last.flatMap { Int($0) } != nil, "a multipart object's ETag ends in -PARTS: \(objectETag)")

        let second = try await store.put(chunks: chunkStream(chunks.reversed()), identifier: "big", options: PutOptions())
        #expect(second.created == first.created && second.modified > first.modified)
        #expect(try await store.get("big") == Data(chunks.reversed().joined()))
        await #expect(throws: BlobStoreError.preconditionFailed(store: store.name, identifier: "big", expected: nil, actual: second.etag)) {
            try await store.put(chunks: chunkStream(chunks), identifier: "big", options: PutOptions(condition: .ifNoneMatch))
        }
        // A small blob still goes up in one PUT.
        try await store.put(Data("small".utf8), identifier: "small")
        #expect(try await store.get("small") == Data("small".utf8))
    }

    /// Above the multipart threshold a put's condition is checked with a HEAD before the upload,
    /// and its completion is not conditional: a version another writer stores while the parts go
    /// up is replaced without a `412`. So an overwrite keeps the `created` it read before the
    /// upload, even when the key was removed and created again meanwhile (whose `created` is
    /// lost), and two create-only puts of one key can both succeed (docs/SCALE-OUT.md, "Consistency").
    @Test func aMultipartPutReplacesAVersionStoredDuringItsUploadUnchecked() async throws {
        guard let base = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        // What another writer does once, while the first part goes up.
        let interloper = Locked<(@Sendable () throws -> Void)?>(nil)
        let store = S3BlobStore(
            name: base.name, client: base.client, layout: base.layout, multipartThreshold: 6 << 20,
            beforeMultipartPart: { number throws(S3ClientError) in
                guard number == 1, let act = interloper.withLock({ action in defer { action = nil }; return action }) else { return }
                do { try act() } catch { Issue.record("the other writer failed: \(error)") }
            })
        let other = S3BlobStore(name: base.name, client: base.client, layout: base.layout)
        let client = base.client
        /// Another writer's version of `identifier`, written straight to the bucket, `created` at `created`.
        @Sendable func writeOther(_ identifier: String, _ text: String, created: Date) throws -> BlobMetadata {
            let content = Data(text.utf8)
            let metadata = BlobMetadata(
                identifier: identifier, size: Int64(content.count), contentType: "text/plain", etag: ETag(checksum: XXH64.hash(content)),
                created: created, modified: created)
            try Self.writeRaw(base, key: base.layout.blobKey(store: base.name, identifier: identifier), content: Array(content), metadata: S3MetadataHeader.encode(metadata))
            return metadata
        }
        let content = pseudoRandomBytes(13 << 20, seed: 43)
        let chunks = stride(from: 0, to: content.count, by: 1 << 20).map { content.subdata(in: $0..<min($0 + (1 << 20), content.count)) }
        let recreatedAt = Date(timeIntervalSince1970: 2_000_000_000)

        // An overwrite of a key this instance knows, while another writer removes the key and creates it again.
        let first = try await store.put(Data("first".utf8), identifier: "k")
        interloper.withLock { action in
            action = {
                let key = base.layout.blobKey(store: base.name, identifier: "k")
                _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
                _ = try writeOther("k", "created again by another writer", created: recreatedAt)
            }
        }
        let overwrite = try await store.put(chunks: chunkStream(chunks), identifier: "k", options: PutOptions())
        #expect(interloper.withLock { $0 == nil }, "the other writer acted during the upload")
        #expect(overwrite.created == first.created, "the created read before the upload")
        let found = try await other.head("k")
        #expect(found == overwrite && found.created != recreatedAt, "the version created meanwhile was replaced, and its created lost")
        #expect(try await other.get("k") == content)

        // Two create-only puts of one key: the other writer's, during the upload, and this one.
        interloper.withLock { action in action = { _ = try writeOther("n", "the other creator", created: recreatedAt) } }
        let created = try await store.put(chunks: chunkStream(chunks), identifier: "n", options: PutOptions(condition: .ifNoneMatch))
        #expect(interloper.withLock { $0 == nil }, "the other writer acted during the upload")
        #expect(try await other.head("n") == created, "both create-only puts succeeded; the multipart one, completed last, is there")
    }

    @Test func foreignObjectsAreSkippedByListingsAndNamedByReads() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        try await store.put(Data("mine".utf8), identifier: "a")
        let key = store.layout.blobKey(store: store.name, identifier: "b")
        try Self.writeRaw(store, key: key, content: Array("theirs".utf8), metadata: nil)
        try Self.writeRaw(store, key: store.layout.blobKey(store: store.name, identifier: "c"), content: [1], metadata: "not-ours")
        #expect(try await store.listAll().map(\.identifier) == ["a"])
        for read in [{ _ = try await store.get("b") }, { _ = try await store.head("b") }, { _ = try await store.exists("b") }] as [() async throws -> Void] {
            let error = await #expect(throws: BlobStoreError.self) { try await read() }
            guard case .corrupt(let path, let reason)? = error else {
                Issue.record("expected corrupt naming the key, got \(String(describing: error))")
                continue
            }
            #expect(path == "s3://\(store.client.bucket.name)/\(key)")
            #expect(reason.contains("x-amz-meta-blob"))
        }
        let report = try await store.verify(repair: false)
        #expect(report.healthy == 1 && report.corrupt.isEmpty)
        #expect(report.orphaned.map(\.identifier) == ["b", "c"])
        // An unconditional put replaces a foreign object.
        let put = try await store.put(Data("now mine".utf8), identifier: "b")
        #expect(try await store.head("b") == put)
    }

    @Test func contentThatDoesNotMatchItsETagIsCorruptNeverData() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let good = try await store.put(Data("original".utf8), identifier: "x")
        let key = store.layout.blobKey(store: store.name, identifier: "x")
        // Same length, other bytes, the original's header: a damaged object.
        try Self.writeRaw(store, key: key, content: Array("0riginal".utf8), metadata: S3MetadataHeader.encode(good))
        let uri = "s3://\(store.client.bucket.name)/\(key)"
        for read in [{ _ = try await store.get("x") }, { _ = try await collect(try await store.stream("x")) }] as [() async throws -> Void] {
            let error = await #expect(throws: BlobStoreError.self) { try await read() }
            guard case .corrupt(let path, let reason)? = error else {
                Issue.record("expected corrupt, got \(String(describing: error))")
                continue
            }
            #expect(path == uri)
            #expect(reason.contains(good.etag.rawValue))
        }
        let report = try await store.verify(repair: true)
        #expect(report.corrupt.map(\.path) == [uri])
        #expect(report.quarantined == [], "a repair moves nothing on S3")
        #expect(throws: BlobStoreError.self) { try store.open("x").read(0..<8) }
    }

    @Test func concurrentCreatorsAndOverwritersKeepOneCreatedDate() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        // Fresh instances: no hints, so every put goes through S3's own conditions.
        func instance() -> S3BlobStore { S3BlobStore(name: store.name, client: store.client, layout: store.layout) }
        let outcomes = await withTaskGroup(of: Result<BlobMetadata, any Error>.self) { group in
            for index in 0..<8 {
                group.addTask {
                    do {
                        return .success(try await instance().put(Data("creator \(index)".utf8), identifier: "k", options: PutOptions(condition: .ifNoneMatch)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let winners = outcomes.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        for case .failure(let error) in outcomes {
            guard case BlobStoreError.preconditionFailed(_, "k", nil, _) = error else {
                Issue.record("a losing creator got \(error)")
                continue
            }
        }
        let created = try #require(winners.first).created
        let overwrites = try await withThrowingTaskGroup(of: BlobMetadata.self) { group in
            for index in 0..<8 { group.addTask { try await instance().put(Data("overwrite \(index)".utf8), identifier: "k") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(overwrites.count == 8)
        #expect(overwrites.allSatisfy { $0.created == created })
        let final = try await store.head("k")
        #expect(final.created == created)
        #expect(overwrites.contains(final))
    }

    @Test func identifiersUpToTheKeyLimitRoundTripAndLongerOnesNameIt() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let limit = store.layout.maximumIdentifierByteCount(store: store.name)
        let longest = String(repeating: "é", count: limit / 2) + String(repeating: "x", count: limit % 2)
        #expect(longest.utf8.count == limit)
        let put = try await store.put(Data("long".utf8), identifier: longest)
        #expect(try await store.get(longest) == Data("long".utf8))
        #expect(try await store.listAll() == [put])
        let tooLong = longest + "y"
        let error = await #expect(throws: BlobStoreError.self) { try await store.put(Data(), identifier: tooLong) }
        guard case .tooLarge(let what, let limitFound, let actual)? = error else {
            Issue.record("expected tooLarge, got \(String(describing: error))")
            return
        }
        #expect(limitFound == Int64(limit) && actual == Int64(limit + 1))
        #expect(what.contains("S3 key") && what.contains("1024"))
        await #expect(throws: BlobStoreError.self) { try await store.head(tooLong) }
    }

    @Test func aPutsOwnExpiryIsHonouredWithoutASweep() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        try await store.put(Data("old".utf8), identifier: "gone", options: PutOptions(expiry: .at(Date(timeIntervalSinceNow: -1))))
        try await store.put(Data("kept".utf8), identifier: "kept", options: PutOptions(expiry: .after(.seconds(3600))))
        await #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "gone")) { try await store.get("gone") }
        #expect(try await store.exists("gone") == false)
        #expect(try await store.listAll().map(\.identifier) == ["kept"])
        // Absent to conditions and to created: a create-only put succeeds, with a new created date.
        let again = try await store.put(Data("new".utf8), identifier: "gone", options: PutOptions(condition: .ifNoneMatch))
        #expect(try await store.get("gone") == Data("new".utf8))
        #expect(again.created == again.modified)
    }

    @Test func blobdsCallsServeSmallFromMemoryAndLargeFromAFetchedFile() async throws {
        guard let store = try S3Gateway.freshStore() else { return print(S3Gateway.skipReason) }
        let large = pseudoRandomBytes(3 << 20, seed: 7)
        let upload = try store.startUpload(identifier: "large", options: PutOptions())
        try large.withUnsafeBytes { raw in
            for start in stride(from: 0, to: raw.count, by: 1 << 20) {
                try upload.append(UnsafeRawBufferPointer(rebasing: raw[start..<min(start + (1 << 20), raw.count)]))
            }
        }
        // The commit completes on a transport thread of its own.
        let metadata = try await withCheckedThrowingContinuation { continuation in upload.commit { continuation.resume(with: $0) } }
        #expect(metadata.etag == expectedETag(large))
        try await store.put(Data("small".utf8), identifier: "small")

        let small = try store.open("small")
        #expect(small.readsWithoutWaiting && small.fileBody == nil)
        #expect(try small.read(0..<5) == Data("small".utf8))
        let served = try store.open("large")
        let file = try #require(served.fileBody)
        try file.checkContent(throughFileOffset: file.contentOffset + metadata.size, isLast: true)
        #expect(try served.read(10..<20) == large.subdata(in: 10..<20))
        served.close()
        #expect(try await store.policy() == .unlimited)
        await #expect(throws: UnsupportedPolicy.self) { try await store.setPolicy(StorePolicy(maximumCount: 10)) }
        try await store.setPolicy(.unlimited)
    }
}

/// A store whose gateway is not there: every error names the backend (endpoint and bucket) and the
/// key, and none is "not found". Needs no gateway.
@Suite struct StoreUnreachableTests {
    @Test func everyOperationFailsAsBackendUnavailableNamingEndpointBucketAndKey() async throws {
        let configuration = S3Configuration(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1",
            endpoint: S3Endpoint(scheme: .http, host: "127.0.0.1", port: 1), addressingStyle: .path)
        let store = try S3BlobStore(name: "nowhere", bucket: "some-bucket", keyPrefix: "p", configuration: configuration)
        let calls: [(String, () async throws -> Void)] = [
            ("get", { _ = try await store.get("the-key") }), ("head", { _ = try await store.head("the-key") }),
            ("exists", { _ = try await store.exists("the-key") }), ("put", { try await store.put(Data("x".utf8), identifier: "the-key") }),
            ("remove", { try await store.remove("the-key") }), ("list", { _ = try await store.list(ListQuery()) }),
            ("statistics", { _ = try await store.statistics() }),
        ]
        for (label, call) in calls {
            let error = await #expect(throws: BlobStoreError.self, "\(label)") { try await call() }
            guard case .backendUnavailable(let name, let backend, let reason)? = error else {
                Issue.record("\(label): expected backendUnavailable, got \(String(describing: error))")
                continue
            }
            #expect(name == "nowhere")
            #expect(backend == "s3://some-bucket/p at http://127.0.0.1:1", "\(label)")
            #expect(reason.contains("s3://some-bucket/p/nowhere/"), "\(label): \(reason)")
            if !["list", "statistics"].contains(label) { #expect(reason.contains("the-key"), "\(label): \(reason)") }
        }
    }
}
