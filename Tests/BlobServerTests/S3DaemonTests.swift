@testable import BlobServer
import BlobStore
import BlobSystem
import BlobTestSupport
import Foundation
import S3BlobStore
import Testing

/// blobd on S3 (`--backend s3://BUCKET/PREFIX`) against the gateway `.ci/ceph up` brings up: the
/// blob API through its socket, `blob --backend s3://…` on the same stores, the read cache's hits
/// and currency, and a gateway that goes down and comes back. Skipped, saying why, without the
/// gateway's env (`DIR/env`: AWS_ENDPOINT_URL, the keys, BLOB_S3_BUCKET).
@Suite struct S3DaemonTests {
    static let bucket: String? = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["AWS_ENDPOINT_URL"] != nil, environment["AWS_ACCESS_KEY_ID"] != nil else { return nil }
        return environment["BLOB_S3_BUCKET"]
    }()

    static let skipReason = "S3DaemonTests: skipped, no gateway (run .ci/ceph up DIR and source DIR/env for AWS_ENDPOINT_URL, the keys and BLOB_S3_BUCKET)"

    /// A location of its own per test, so runs and tests never see each other's stores.
    static func location(_ bucket: String) -> String { "s3://\(bucket)/daemon-\(UUID().uuidString.prefix(8).lowercased())" }

    /// blobd in this process over the gateway (or `endpoint`), so a test can read its cache's counters.
    final class InProcessDaemon {
        let folder = TempFolder()
        let socketPath: String
        let setup: S3BackendSetup
        let cache: S3ReadCache
        private let listener: FileDescriptor
        private let server: Server

        /// The S3 transport's timeouts and limits are `transport`'s; `variables` (the AWS settings of
        /// another gateway) override this process's environment.
        init(
            location: String, endpoint: String? = nil, transport: TransportConfiguration = TransportConfiguration(),
            variables overrides: [String: String] = [:]
        ) throws {
            var variables = ProcessInfo.processInfo.environment.merging(overrides) { $1 }
            if let endpoint { variables["AWS_ENDPOINT_URL"] = endpoint }
            setup = try S3BackendSetup(
                location: location, environment: AWSEnvironment(variables: variables, readFile: AWSEnvironment.process.readFile), checkBucket: true,
                transport: transport)
            cache = try S3ReadCache(S3ReadCacheConfiguration(folder: folder.path + "/cache"))
            socketPath = folder.path + "/blobd.sock"
            listener = try UnixSocket.listen(path: socketPath, permissions: 0o600)
            server = try Server(
                listener: listener, catalog: DaemonS3Backend.catalog(setup, cache: cache), maximumBlobSize: 1 << 30, eventLoopCount: 2,
                heartbeatSeconds: 15, accessLog: nil, allowedGroup: nil, log: Log(level: .error))
        }

        func client() throws -> RawClient { try RawClient(path: socketPath) }

        deinit {
            server.stop(graceSeconds: 1)
            try? listener.close()
        }
    }

    private func errorCode(_ response: RawResponse) -> String? {
        response.json.flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    private func errorMessage(_ response: RawResponse) -> String {
        response.json.flatMap { ($0["error"] as? [String: Any])?["message"] as? String } ?? response.text
    }

    @Test func blobdOnS3ServesTheBlobAPIThroughItsSocket() async throws { try await onOwnThread { try Self().blobdOnS3ServesTheBlobAPIThroughItsSocketBlocking() } }

    func blobdOnS3ServesTheBlobAPIThroughItsSocketBlocking() throws {
        guard let bucket = Self.bucket, BlobdBinary.url != nil else { return print(Self.skipReason) }
        let folder = TempFolder()
        let location = Self.location(bucket)
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--backend", location, "--cache", folder.path + "/cache"])
        defer { daemon.terminate() }
        let client = try daemon.connect()
        #expect(daemon.log.contains("backend \(location)") && daemon.log.contains("read cache \(folder.path)/cache"), "\(daemon.log)")

        #expect(try client.request("GET", "/v1/stores/notes/blobs/a").status == 404)
        let put = try client.request(
            "PUT", "/v1/stores/notes/blobs/a%2Fb", headers: ["Content-Type": "text/plain", "Blob-Meta-Colour": "red"], body: Array("hello world".utf8))
        #expect(put.status == 201, "\(put.text)")
        let etag = try #require(put.header("ETag"))
        let get = try client.request("GET", "/v1/stores/notes/blobs/a%2Fb")
        #expect(get.status == 200 && get.text == "hello world")
        #expect(get.header("Content-Type") == "text/plain" && get.header("Blob-Meta-colour") == "red" && get.header("ETag") == etag)
        let head = try client.request("HEAD", "/v1/stores/notes/blobs/a%2Fb")
        #expect(head.status == 200 && head.header("Content-Length") == "11" && head.header("ETag") == etag)
        let part = try client.request("GET", "/v1/stores/notes/blobs/a%2Fb", headers: ["Range": "bytes=6-"])
        #expect(part.status == 206 && part.text == "world" && part.header("Content-Range") == "bytes 6-10/11")
        #expect(try client.request("GET", "/v1/stores/notes/blobs/a%2Fb", headers: ["If-None-Match": etag]).status == 304)
        #expect(try client.request("PUT", "/v1/stores/notes/blobs/a%2Fb", headers: ["If-None-Match": "*"], body: [1]).status == 412)
        // Large enough to be sent from the cache's file with sendfile.
        let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try client.request("PUT", "/v1/stores/notes/blobs/large", body: large).status == 201)
        #expect(try client.request("GET", "/v1/stores/notes/blobs/large").body == large)
        #expect(try client.request("GET", "/v1/stores/notes/blobs/large").body == large, "again, from the validated entry")
        #expect(try client.request("PUT", "/v1/stores/notes/blobs/c", body: Array("third".utf8)).status == 201)

        let list = try client.request("GET", "/v1/stores/notes/blobs?limit=2")
        let items = try #require(list.json?["items"] as? [[String: Any]], "\(list.text)")
        #expect(items.map { $0["identifier"] as? String } == ["a/b", "c"])
        #expect(list.json?["nextCursor"] is String)
        let stores = try #require(try client.request("GET", "/v1/stores").json?["stores"] as? [[String: Any]])
        #expect(stores.map { $0["name"] as? String } == ["notes"])

        // A refused first put to a new store leaves the store, empty: on S3 its marker stays
        // (docs/SCALE-OUT.md, "blobd and blob on S3").
        #expect(try client.request("PUT", "/v1/stores/fresh/blobs/x", headers: ["If-Match": etag], body: [1]).status == 412)
        let after = try #require(try client.request("GET", "/v1/stores").json?["stores"] as? [[String: Any]])
        #expect(after.map { $0["name"] as? String } == ["fresh", "notes"])
        #expect(try client.request("GET", "/v1/stores/fresh/blobs").json?["items"] as? [Any] != nil)
        #expect(try client.request("GET", "/v1/stores/fresh/blobs/x").status == 404)

        #expect(try client.request("DELETE", "/v1/stores/notes/blobs/c").status == 204)
        #expect(try client.request("DELETE", "/v1/stores/notes/blobs/c").status == 404)
        #expect(try client.request("GET", "/v1/stores/notes/blobs/c").status == 404)
        #expect(try client.request("DELETE", "/v1/stores/notes/blobs").status == 204)
        #expect(try client.request("GET", "/v1/stores/notes/blobs/a%2Fb").status == 404)
        #expect(try client.request("GET", "/v1/stores/notes/blobs/large").status == 404)
        #expect(!FileManager.default.fileExists(atPath: daemon.root + "/.lock") && !FileManager.default.fileExists(atPath: daemon.root + "/notes"),
                "the root holds no store and no lock")
    }

    @Test func blobAndBlobdReadEachOthersBlobs() async throws { try await onOwnThread { try Self().blobAndBlobdReadEachOthersBlobsBlocking() } }

    func blobAndBlobdReadEachOthersBlobsBlocking() throws {
        guard let bucket = Self.bucket, BlobdBinary.url != nil, let blob = BlobBinary.url?.path else { return print(Self.skipReason) }
        let folder = TempFolder()
        let location = Self.location(bucket)
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--backend", location, "--cache", folder.path + "/cache"])
        defer { daemon.terminate() }
        let client = try daemon.connect()

        let put = try runProgram(blob, ["--backend", location, "put", "shared/from-cli", "-"], input: Data("written by blob".utf8))
        #expect(put.status == 0, "\(String(decoding: put.error, as: UTF8.self))")
        #expect(try client.request("GET", "/v1/stores/shared/blobs/from-cli").text == "written by blob")

        #expect(try client.request("PUT", "/v1/stores/shared/blobs/from-daemon", body: Array("written through blobd".utf8)).status == 201)
        let get = try runProgram(blob, ["--backend", location, "get", "shared/from-daemon"])
        #expect(get.status == 0 && get.outputText == "written through blobd")
        let ls = try runProgram(blob, ["--backend", location, "ls", "shared", "--json"])
        #expect(ls.status == 0 && ls.outputText.contains("from-cli") && ls.outputText.contains("from-daemon"), "\(ls.outputText)")
        let stat = try runProgram(blob, ["--backend", location, "stat", "shared/from-cli"])
        #expect(stat.status == 0 && stat.outputText.contains("15 bytes"), "\(stat.outputText)")
        let stores = try runProgram(blob, ["--backend", location, "stores"])
        #expect(stores.status == 0 && stores.outputText.contains("shared"))

        // An overwrite and a remove by blob are seen by the daemon's next read (its cache validates).
        let overwrite = try runProgram(blob, ["--backend", location, "put", "shared/from-daemon", "-"], input: Data("replaced by blob".utf8))
        #expect(overwrite.status == 0)
        #expect(try client.request("GET", "/v1/stores/shared/blobs/from-daemon").text == "replaced by blob")
        #expect(try runProgram(blob, ["--backend", location, "rm", "shared/from-cli"]).status == 0)
        #expect(try client.request("GET", "/v1/stores/shared/blobs/from-cli").status == 404)

        // docs/CLI.md, "On S3".
        let missing = try runProgram(blob, ["--backend", location, "get", "nostore/x"])
        #expect(missing.status == 2 && String(decoding: missing.error, as: UTF8.self).contains("store 'nostore' not found"))
        for command in [["verify"], ["watch"], ["store", "show", "shared"]] {
            #expect(try runProgram(blob, ["--backend", location] + command).status == 64, "\(command)")
        }
        #expect(try runProgram(blob, ["--backend", location, "--root", folder.path, "ls", "shared"]).status == 64)
        #expect(try runProgram(blob, ["--socket", daemon.socketPath, "--backend", location, "ls", "shared"]).status == 64)
        let unreachable = try runProgram(blob, ["--backend", location, "ls", "shared"], environment: ["AWS_ENDPOINT_URL": "http://127.0.0.1:1"])
        let message = String(decoding: unreachable.error, as: UTF8.self)
        #expect(unreachable.status == 69 && message.contains("store 'shared' cannot use its backend \(location) at http://127.0.0.1:1"), "\(message)")
        _ = try runProgram(blob, ["--backend", location, "rm", "shared/from-daemon"])
    }

    @Test func theCacheServesHitsWithoutDownloadingAndNeverAStaleVersion() async throws {
        guard let bucket = Self.bucket else { return print(Self.skipReason) }
        let daemon = try InProcessDaemon(location: Self.location(bucket))
        let client = try daemon.client()
        let first = (0..<4096).map { UInt8(truncatingIfNeeded: $0) }
        #expect(try client.request("PUT", "/v1/stores/p/blobs/a", body: first).status == 201)
        for _ in 0..<3 { #expect(try client.request("GET", "/v1/stores/p/blobs/a").body == first) }
        var counters = daemon.cache.counters
        #expect(counters.fetched == 1 && counters.notModified == 2 && counters.hits == 2 && counters.fills == 1, "\(counters)")

        // Another writer (its own S3 client, not this daemon) replaces the blob: the next read has it.
        let elsewhere = daemon.setup.store("p")
        let second = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        _ = try await elsewhere.put(second, identifier: "a", options: PutOptions())
        #expect(try client.request("GET", "/v1/stores/p/blobs/a").body == Array(second))
        counters = daemon.cache.counters
        #expect(counters.fetched == 2 && counters.notModified == 2, "\(counters)")
        #expect(try client.request("GET", "/v1/stores/p/blobs/a").body == Array(second))
        #expect(daemon.cache.counters.notModified == 3)

        // And removes it: the next read is a 404, and the entry is gone.
        #expect(try await elsewhere.remove("a", condition: .none))
        #expect(try client.request("GET", "/v1/stores/p/blobs/a").status == 404)
        #expect(daemon.cache.occupancy.entries == 0)
    }

    /// PROTOCOL.md, "S3 backend": an S3 store keeps no cache policy. A policy with a limit or a
    /// default time to live is `422 unsupported_policy` (not `500 io_error`), the unlimited one is
    /// taken, and a put's own expiry works without a sweep: from its expiry on the blob is neither
    /// served nor listed, yet no `expired` event comes and the store's count still has it.
    @Test func aPolicyWithLimitsIsRefusedOnS3AndAPutsOwnExpiryIsHonoured() async throws {
        try await onOwnThread { try Self().aPolicyWithLimitsIsRefusedOnS3AndAPutsOwnExpiryIsHonouredBlocking() }
    }

    func aPolicyWithLimitsIsRefusedOnS3AndAPutsOwnExpiryIsHonouredBlocking() throws {
        guard let bucket = Self.bucket else { return print(Self.skipReason) }
        let daemon = try InProcessDaemon(location: Self.location(bucket))
        let client = try daemon.client()
        for body in [#"{"maxCount":5}"#, #"{"maxBytes":1048576}"#, #"{"defaultTTL":60}"#, #"{"maxCount":null,"defaultTTL":1.5}"#] {
            let refused = try client.request("PUT", "/v1/stores/limited", body: Array(body.utf8))
            #expect(refused.status == 422 && errorCode(refused) == "unsupported_policy", "\(body): \(refused.text)")
            let message = errorMessage(refused)
            #expect(message.hasPrefix("store 'limited' cannot keep this policy: an S3 store (s3://\(bucket)/") && message.contains("no default time to live"), "\(message)")
        }
        // The first refusal created the store (its marker stays, as after a refused first blob put): unlimited.
        let shown = try client.request("GET", "/v1/stores/limited")
        let policy = try #require(shown.json?["policy"] as? [String: Any], "\(shown.text)")
        #expect(shown.status == 200 && policy["maxCount"] is NSNull && policy["maxBytes"] is NSNull && policy["defaultTTL"] is NSNull, "\(shown.text)")
        #expect(try client.request("PUT", "/v1/stores/limited", body: Array(#"{"maxCount":null,"maxBytes":null,"defaultTTL":null}"#.utf8)).status == 200)
        #expect(try client.request("PUT", "/v1/stores/limited", body: []).status == 200)
        // Any refused policy update to a new store leaves it there, empty.
        let malformed = try client.request("PUT", "/v1/stores/malformed", body: Array("{".utf8))
        #expect(malformed.status == 400 && errorCode(malformed) == "invalid_policy", "\(malformed.text)")
        #expect(try client.request("GET", "/v1/stores/malformed").json?["count"] as? Int == 0)

        let events = try daemon.client()
        try events.send("GET /v1/events?store=limited HTTP/1.1\r\nHost: blobd\r\n\r\n")
        #expect(try events.readResponse().status == 200)
        func nextEvent() throws -> (event: String, identifier: String?) {
            var frame = try events.readUntil("\n\n")
            while frame.hasPrefix(":") { frame = try events.readUntil("\n\n") }  // heartbeats
            let event = frame.split(separator: "\n").first { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) } ?? ""
            let data = frame.split(separator: "\n").first { $0.hasPrefix("data: ") }.flatMap {
                (try? JSONSerialization.jsonObject(with: Data($0.dropFirst(6).utf8))) as? [String: Any]
            }
            // A put's data has the blob's metadata object, a removal's the identifier.
            return (event, (data?["blob"] as? [String: Any])?["identifier"] as? String ?? data?["identifier"] as? String)
        }
        let put = try client.request("PUT", "/v1/stores/limited/blobs/old", headers: ["Blob-Expires": "2001-01-01T00:00:00Z"], body: Array("x".utf8))
        #expect(put.status == 201 && put.header("Blob-Expires") == "2001-01-01T00:00:00.000Z", "\(put.text)")
        #expect(try nextEvent() == ("put", "old"))
        #expect(try client.request("GET", "/v1/stores/limited/blobs/old").status == 404)
        #expect(try client.request("HEAD", "/v1/stores/limited/blobs/old").status == 404)
        // `Cache-Control: max-age=0`: expired from the put on.
        #expect(try client.request("PUT", "/v1/stores/limited/blobs/zero", headers: ["Cache-Control": "max-age=0"], body: Array("z".utf8)).status == 201)
        #expect(try nextEvent() == ("put", "zero"))
        #expect(try client.request("GET", "/v1/stores/limited/blobs/zero").status == 404)
        #expect((try client.request("GET", "/v1/stores/limited/blobs").json?["items"] as? [Any])?.isEmpty == true)
        #expect(try client.request("PUT", "/v1/stores/limited/blobs/new", body: Array("y".utf8)).status == 201)
        #expect(try nextEvent() == ("put", "new"), "no expired event came between the puts")
        #expect(try client.request("GET", "/v1/stores/limited").json?["count"] as? Int == 3, "the expired objects are still counted")
        #expect(try client.request("DELETE", "/v1/stores/limited/blobs").status == 204)
    }

    /// PROTOCOL.md's `backend_unavailable` row: an object store that cannot be reached is `503
    /// backend_unavailable` naming the bucket and endpoint; other requests are served meanwhile, and
    /// the daemon serves the store again once the object store is back, without a restart.
    @Test func aGatewayThatIsDownIs503BackendUnavailableAndTheDaemonRecovers() async throws { try await onOwnThread { try Self().aGatewayThatIsDownIs503BackendUnavailableAndTheDaemonRecoversBlocking() } }

    func aGatewayThatIsDownIs503BackendUnavailableAndTheDaemonRecoversBlocking() throws {
        guard let bucket = Self.bucket, let upstream = ProcessInfo.processInfo.environment["AWS_ENDPOINT_URL"] else { return print(Self.skipReason) }
        let proxy = try FaultyGateway(upstreamURL: upstream)
        defer { proxy.stop() }
        let location = Self.location(bucket)
        let daemon = try InProcessDaemon(location: location, endpoint: proxy.url)
        let client = try daemon.client()
        #expect(try client.request("PUT", "/v1/stores/f/blobs/a", body: Array("before".utf8)).status == 201)
        #expect(try client.request("GET", "/v1/stores/f/blobs/a").text == "before")

        proxy.inject(.down)
        for (method, target, body) in [("GET", "/v1/stores/f/blobs/a", nil), ("PUT", "/v1/stores/f/blobs/b", Array("during".utf8)), ("GET", "/v1/stores/f/blobs", nil)] as [(String, String, [UInt8]?)] {
            let response = try client.request(method, target, body: body)
            #expect(response.status == 503 && errorCode(response) == "backend_unavailable", "\(method) \(target): \(response.status) \(response.text)")
            #expect(errorMessage(response).contains("store 'f' cannot use its backend \(location) at \(proxy.url)"), "\(errorMessage(response))")
        }
        #expect(try client.request("GET", "/v1/health").status == 200, "other requests are served meanwhile")

        proxy.inject(.none)
        #expect(try client.request("GET", "/v1/stores/f/blobs/a").text == "before")
        #expect(try client.request("PUT", "/v1/stores/f/blobs/b", body: Array("after".utf8)).status == 201)
        #expect(try client.request("GET", "/v1/stores/f/blobs/b").text == "after")
        #expect(try client.request("DELETE", "/v1/stores/f/blobs").status == 204)
    }

    /// The gateway fails in the middle of a transfer (a put's body, a get's content, a listing's
    /// answer): each request gets `503 backend_unavailable`, nothing partial is visible or served as
    /// success, and the same requests succeed once the gateway behaves again, without a restart.
    @Test func aGatewayCutMidPutMidGetAndMidListLosesNothingAndShowsNothingPartial() async throws { try await onOwnThread { try Self().aGatewayCutMidPutMidGetAndMidListLosesNothingAndShowsNothingPartialBlocking() } }

    func aGatewayCutMidPutMidGetAndMidListLosesNothingAndShowsNothingPartialBlocking() throws {
        guard let bucket = Self.bucket, let upstream = ProcessInfo.processInfo.environment["AWS_ENDPOINT_URL"] else { return print(Self.skipReason) }
        let proxy = try FaultyGateway(upstreamURL: upstream)
        defer { proxy.stop() }
        let location = Self.location(bucket)
        // The writer talks to the gateway straight; the reader (an empty cache) through the proxy.
        let writer = try InProcessDaemon(location: location)
        let reader = try InProcessDaemon(location: location, endpoint: proxy.url)
        let big = Array(pseudoRandomBytes(1 << 20, seed: 19))
        #expect(try writer.client().request("PUT", "/v1/stores/f/blobs/big", body: big).status == 201)
        #expect(try writer.client().request("PUT", "/v1/stores/f/blobs/small", body: Array("small".utf8)).status == 201)
        let client = try reader.client()
        #expect(try client.request("GET", "/v1/stores/f/blobs/small").text == "small", "the reader works through the proxy")

        // Mid-put: the request's body is cut after 64 KiB.
        proxy.inject(.cutRequest(afterBytes: 64 * 1024))
        let put = try client.request("PUT", "/v1/stores/f/blobs/cut", body: big)
        #expect(put.status == 503 && errorCode(put) == "backend_unavailable", "mid-put: \(put.status) \(put.text)")
        proxy.inject(.none)
        #expect(try client.request("GET", "/v1/stores/f/blobs/cut").status == 404, "no partial object is visible")
        #expect(try writer.client().request("HEAD", "/v1/stores/f/blobs/cut").status == 404)

        // Mid-get: the content is cut after 100 KB of the answer (the reader's cache does not hold it).
        proxy.inject(.cutResponse(afterBytes: 100_000))
        let get = try client.request("GET", "/v1/stores/f/blobs/big")
        #expect(get.status == 503 && errorCode(get) == "backend_unavailable", "mid-get: \(get.status) \(get.text.prefix(200))")
        proxy.inject(.none)
        let again = try client.request("GET", "/v1/stores/f/blobs/big")
        #expect(again.status == 200 && again.body == big, "the whole blob once the gateway is back")

        // Mid-list: the listing's answer is cut after 200 bytes.
        proxy.inject(.cutResponse(afterBytes: 200))
        let list = try client.request("GET", "/v1/stores/f/blobs")
        #expect(list.status == 503 && errorCode(list) == "backend_unavailable", "mid-list: \(list.status) \(list.text.prefix(200))")
        proxy.inject(.none)
        let listed = try client.request("GET", "/v1/stores/f/blobs")
        #expect(listed.status == 200 && listed.text.contains("\"big\"") && listed.text.contains("\"small\"") && !listed.text.contains("\"cut\""), "\(listed.text)")

        // The put that failed is made again, whole.
        #expect(try client.request("PUT", "/v1/stores/f/blobs/cut", body: big).status == 201)
        #expect(try writer.client().request("GET", "/v1/stores/f/blobs/cut").body == big)
        #expect(try writer.client().request("DELETE", "/v1/stores/f/blobs").status == 204)
    }

    @Test func blobdStopsAtStartNamingAMissingBucket() async throws { try await onOwnThread { try Self().blobdStopsAtStartNamingAMissingBucketBlocking() } }

    func blobdStopsAtStartNamingAMissingBucketBlocking() throws {
        guard Self.bucket != nil, BlobdBinary.url != nil else { return print(Self.skipReason) }
        let folder = TempFolder()
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--backend", "s3://no-such-bucket-\(UUID().uuidString.prefix(8).lowercased())"], waitForSocket: false)
        #expect(daemon.waitForExit(seconds: 15) == 1)
        #expect(daemon.log.contains("does not exist at") && daemon.log.contains("NoSuchBucket"), "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "no socket was created")
    }
}
