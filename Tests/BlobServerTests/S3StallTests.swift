@testable import BlobServer
import BlobStore
import BlobSystem
import BlobTestSupport
import Foundation
import S3BlobStore
import Testing

/// A gateway that stalls (accepts requests and answers nothing, without closing) through blobd on
/// S3, by way of ``FaultyGateway``: a stalled request holds up no other request, a stall costs each
/// request at most the transport's timeouts and then `503 backend_unavailable` saying so, and the
/// same requests succeed once the gateway answers again, without a restart (docs/SCALE-OUT.md,
/// "blobd and blob on S3"). Bounds are seconds, not milliseconds: they tell "waited for its own
/// timeout" from "was held up behind a stalled request", on a shared machine. The tests wait on
/// threads of their own, not on the concurrency pool. Skipped, saying why, without the gateway's env.
@Suite(.timeLimit(.minutes(3)))
struct S3StallTests {
    static let skipReason = "S3StallTests: skipped, no gateway (run .ci/ceph up DIR and source DIR/env for AWS_ENDPOINT_URL, the keys and BLOB_S3_BUCKET)"

    /// The S3 transport's variable (tested here, so left out of the general variables' test).
    static let timeoutVariables: Set<String> = ["BLOBD_S3_TIMEOUT"]

    /// How long a request that is not held up may take here, generously.
    static let prompt: Duration = .seconds(8)

    /// blobd in this process over the gateway at `endpoint`, with the transport settings `transport`
    /// and the read cache's staleness bound `staleness`.
    final class StallDaemon {
        let folder = TempFolder()
        let socketPath: String
        private let listener: FileDescriptor
        private let server: Server

        init(location: String, endpoint: String, transport: TransportConfiguration, staleness: Double = 0) throws {
            var variables = ProcessInfo.processInfo.environment
            variables["AWS_ENDPOINT_URL"] = endpoint
            let setup = try S3BackendSetup(
                location: location, environment: AWSEnvironment(variables: variables, readFile: AWSEnvironment.process.readFile), checkBucket: true,
                transport: transport)
            let cache = try S3ReadCache(S3ReadCacheConfiguration(folder: folder.path + "/cache", stalenessSeconds: staleness))
            socketPath = folder.path + "/blobd.sock"
            listener = try UnixSocket.listen(path: socketPath, permissions: 0o600)
            server = try Server(
                listener: listener, catalog: DaemonS3Backend.catalog(setup, cache: cache), maximumBlobSize: 1 << 30, eventLoopCount: 2,
                heartbeatSeconds: 15, accessLog: nil, allowedGroup: nil, log: Log(level: .error),
                pools: DaemonS3Backend.workPools(for: transport))
        }

        func client() throws -> RawClient { try RawClient(path: socketPath) }

        deinit {
            server.stop(graceSeconds: 1)
            try? listener.close()
        }
    }

    /// A request made on a connection and thread of its own; its outcome once it has ended.
    final class Pending: Sendable {
        private let outcome = Locked<Result<RawResponse, HarnessError>?>(nil)
        private let ended = DispatchSemaphore(value: 0)

        init(_ socketPath: String, _ method: String, _ target: String, body: [UInt8]? = nil) {
            Thread { [outcome, ended] in
                let result: Result<RawResponse, HarnessError>
                do { result = .success(try RawClient(path: socketPath).request(method, target, body: body)) } catch {
                    result = .failure(HarnessError("\(method) \(target): \(error)"))
                }
                outcome.withLock { $0 = result }
                ended.signal()
            }.start()
        }

        var hasEnded: Bool { outcome.withLock { $0 != nil } }

        /// The response, waiting up to `timeout` for it.
        func response(within timeout: Duration = .seconds(30)) throws -> RawResponse {
            let (seconds, attoseconds) = timeout.components
            guard ended.wait(timeout: .now() + .milliseconds(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))) == .success else {
                throw HarnessError("no response within \(timeout)")
            }
            return try outcome.withLock { $0! }.get()
        }
    }

    /// The response to one request on a fresh connection, and how long it took.
    private func timed(
        _ daemon: StallDaemon, _ method: String, _ target: String, body: [UInt8]? = nil
    ) throws -> (response: RawResponse, elapsed: Duration) {
        let start = ContinuousClock.now
        let response = try daemon.client().request(method, target, body: body)
        return (response, ContinuousClock.now - start)
    }

    private func errorCode(_ response: RawResponse) -> String? {
        response.json.flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    private func errorMessage(_ response: RawResponse) -> String {
        response.json.flatMap { ($0["error"] as? [String: Any])?["message"] as? String } ?? response.text
    }

    private static func setting() -> (bucket: String, upstream: String)? {
        let environment = ProcessInfo.processInfo.environment
        guard let bucket = S3DaemonTests.bucket, let upstream = environment["AWS_ENDPOINT_URL"] else { return nil }
        return (bucket, upstream)
    }

    /// `--s3-timeout SECONDS` (`BLOBD_S3_TIMEOUT`) sets the S3 transport's first-byte and idle
    /// timeouts, and caps its connect wait (parsing only: no gateway needed).
    @Test func theS3TimeoutComesFromAFlagOrItsVariable() throws {
        guard case .run(let defaults) = DaemonCommandLine.parse(["--backend", "s3://photos"], environment: [:]) else {
            Issue.record("defaults refused")
            return
        }
        #expect(defaults.s3TimeoutSeconds == 30)
        #expect(DaemonS3Backend.transport(defaults) == TransportConfiguration(), "the default is the transport's own")

        guard case .run(let flag) = DaemonCommandLine.parse(["--backend", "s3://photos", "--s3-timeout=2.5"], environment: ["BLOBD_S3_TIMEOUT": "9"]) else {
            Issue.record("flag refused")
            return
        }
        #expect(flag.s3TimeoutSeconds == 2.5, "the flag wins over its variable")
        let short = DaemonS3Backend.transport(flag)
        #expect(short.firstByteTimeout == .milliseconds(2500) && short.idleTimeout == .milliseconds(2500) && short.connectTimeout == .milliseconds(2500))
        #expect(short.maximumConnectionsPerEndpoint == 64 && short.continueTimeout == .seconds(1))

        guard case .run(let variable) = DaemonCommandLine.parse([], environment: ["BLOBD_BACKEND": "s3://photos", "BLOBD_S3_TIMEOUT": "120"]) else {
            Issue.record("variable refused")
            return
        }
        let long = DaemonS3Backend.transport(variable)
        #expect(long.firstByteTimeout == .seconds(120) && long.idleTimeout == .seconds(120) && long.connectTimeout == .seconds(5), "connecting waits 5 s at most")

        let mistakes: [([String], [String: String], String)] = [
            (["--backend", "s3://photos", "--s3-timeout", "0"], [:], "--s3-timeout must be a number of seconds from 0.1 to 3600"),
            (["--backend", "s3://photos", "--s3-timeout", "3601"], [:], "--s3-timeout must be a number of seconds from 0.1 to 3600"),
            (["--backend", "s3://photos"], ["BLOBD_S3_TIMEOUT": "soon"], "BLOBD_S3_TIMEOUT must be a number of seconds from 0.1 to 3600"),
            (["--s3-timeout", "5"], [:], "--s3-timeout is a setting of the S3 backend: it needs --backend s3://BUCKET[/PREFIX]"),
            (["--backend", "memory"], ["BLOBD_S3_TIMEOUT": "5"], "BLOBD_S3_TIMEOUT is a setting of the S3 backend"),
        ]
        for (arguments, environment, message) in mistakes {
            guard case .usageError(let text) = DaemonCommandLine.parse(arguments, environment: environment) else {
                Issue.record("\(arguments) \(environment) was accepted")
                continue
            }
            #expect(text.hasPrefix(message), "\(text)")
        }
        for word in ["--s3-timeout SECONDS", "BLOBD_S3_TIMEOUT", "(default 30)"] {
            #expect(DaemonCommandLine.usage.contains(word), "\(word)")
        }
    }

    /// One request stalls in the gateway (its key's GET; a first put's check of a new store's
    /// marker; a small PUT): meanwhile gets, heads, puts, listings, a cache hit, health and metrics through the
    /// same blobd, on both event loops, complete promptly; the stalled request ends `503` when its
    /// connection is dropped, and succeeds once the gateway answers it.
    @Test func aStalledRequestDoesNotHoldUpOtherRequests() async throws { try await onOwnThread { try Self().aStalledRequestDoesNotHoldUpOtherRequestsBlocking() } }

    func aStalledRequestDoesNotHoldUpOtherRequestsBlocking() throws {
        guard let (bucket, upstream) = Self.setting() else { return print(Self.skipReason) }
        let proxy = try FaultyGateway(upstreamURL: upstream)
        defer { proxy.stop() }
        let location = S3DaemonTests.location(bucket)
        // Long enough that the stalled request is still waiting when the others are done.
        let daemon = try StallDaemon(
            location: location, endpoint: proxy.url, transport: TransportConfiguration(timeout: .seconds(15)), staleness: 600)
        // Written straight to the gateway, so that this daemon's cache holds none of them yet.
        let writer = try StallDaemon(location: location, endpoint: upstream, transport: TransportConfiguration())
        for name in ["ok-1", "ok-2", "held"] {
            #expect(try writer.client().request("PUT", "/v1/stores/s/blobs/\(name)", body: Array(name.utf8)).status == 201)
        }
        #expect(try daemon.client().request("GET", "/v1/stores/s/blobs/ok-1").text == "ok-1", "now in the read cache")

        func othersComplete(_ phase: String, put: String) throws {
            // Several connections, so that both event loops serve some.
            for round in 0..<3 {
                let checks: [(String, String, [UInt8]?, Int)] = [
                    ("GET", "/v1/stores/s/blobs/ok-1", nil, 200),  // a cache hit within the staleness bound
                    ("GET", "/v1/stores/s/blobs/ok-2", nil, 200),  // from the gateway the first time
                    ("HEAD", "/v1/stores/s/blobs/ok-2", nil, 200),
                    ("GET", "/v1/stores/s/blobs/absent-\(round)", nil, 404),  // from the gateway every time
                    ("PUT", "/v1/stores/s/blobs/\(put)-\(round)", Array(put.utf8), 201),
                    ("GET", "/v1/stores/s/blobs/\(put)-\(round)", nil, 200),
                    ("GET", "/v1/stores/s/blobs?prefix=ok-", nil, 200),
                    ("GET", "/v1/health", nil, 200),
                    ("GET", "/metrics", nil, 200),
                ]
                for (method, target, body, status) in checks {
                    let (response, elapsed) = try timed(daemon, method, target, body: body)
                    #expect(response.status == status, "\(phase): \(method) \(target): \(response.status) \(response.text.prefix(300))")
                    #expect(elapsed < Self.prompt, "\(phase): \(method) \(target) took \(elapsed)")
                }
            }
        }

        // A GET whose S3 request stalls.
        proxy.inject(.stallRequests(containing: "/s/held "))
        let stalledGet = Pending(daemon.socketPath, "GET", "/v1/stores/s/blobs/held")
        #expect(proxy.waitForStalledConnections(1), "the GET reached the gateway and stalls there")
        try othersComplete("a GET stalled", put: "during-get")
        #expect(!stalledGet.hasEnded && proxy.stalledConnections == 1, "the stalled GET was still waiting meanwhile")
        proxy.inject(.down)
        let dropped = try stalledGet.response()
        #expect(dropped.status == 503 && errorCode(dropped) == "backend_unavailable", "\(dropped.status) \(dropped.text)")
        proxy.inject(.none)
        #expect(try daemon.client().request("GET", "/v1/stores/s/blobs/held").text == "held")

        // The first put to a new store, whose check of the store's marker stalls.
        proxy.inject(.stallRequests(containing: "/.stores/fresh "))
        let stalledPut = Pending(daemon.socketPath, "PUT", "/v1/stores/fresh/blobs/x", body: Array("fresh".utf8))
        #expect(proxy.waitForStalledConnections(1), "the marker check reached the gateway and stalls there")
        try othersComplete("a new store's marker check stalled", put: "during-marker")
        #expect(!stalledPut.hasEnded && proxy.stalledConnections == 1, "the stalled PUT was still waiting meanwhile")
        proxy.inject(.down)
        let refused = try stalledPut.response()
        #expect(refused.status == 503 && errorCode(refused) == "backend_unavailable", "\(refused.status) \(refused.text)")
        proxy.inject(.none)
        let put = try daemon.client().request("PUT", "/v1/stores/fresh/blobs/x", body: Array("fresh".utf8))
        #expect(put.status == 201, "\(put.status) \(put.text)")
        #expect(try daemon.client().request("GET", "/v1/stores/fresh/blobs/x").text == "fresh")

        // A small PUT whose S3 request stalls (other small puts of its store on its event loop
        // must not queue behind it).
        proxy.inject(.stallRequests(containing: "/s/slow-put "))
        let stalledSmallPut = Pending(daemon.socketPath, "PUT", "/v1/stores/s/blobs/slow-put", body: Array("slow".utf8))
        #expect(proxy.waitForStalledConnections(1), "the PUT reached the gateway and stalls there")
        try othersComplete("a small PUT stalled", put: "during-put")
        #expect(!stalledSmallPut.hasEnded && proxy.stalledConnections == 1, "the stalled PUT was still waiting meanwhile")
        proxy.inject(.down)
        let unstored = try stalledSmallPut.response()
        #expect(unstored.status == 503 && errorCode(unstored) == "backend_unavailable", "\(unstored.status) \(unstored.text)")
        proxy.inject(.none)
        #expect(try daemon.client().request("PUT", "/v1/stores/s/blobs/slow-put", body: Array("slow".utf8)).status == 201)

        // Nothing acknowledged was lost.
        for name in ["ok-1", "ok-2", "held", "during-get-0", "during-get-2", "during-marker-1", "during-put-2", "slow-put"] {
            #expect(try daemon.client().request("GET", "/v1/stores/s/blobs/\(name)").status == 200, "\(name)")
        }
        #expect(try daemon.client().request("DELETE", "/v1/stores/s/blobs").status == 204)
        #expect(try daemon.client().request("DELETE", "/v1/stores/fresh/blobs").status == 204)
    }

    /// A put whose answer is lost after the gateway received it whole (the answer cut, or never
    /// coming until the timeout) is answered `503 backend_unavailable`, yet was stored: the gateway
    /// carried it out. A retry with a condition says so: `If-None-Match: *` (a new blob) and
    /// `If-Match` with the ETag the put meant to replace are both `412`, carrying the ETag of the
    /// content the first attempt sent (docs/SCALE-OUT.md, "blobd and blob on S3").
    @Test func aPutAnswered503AfterItsAnswerWasLostMayHaveBeenStored() async throws { try await onOwnThread { try Self().aPutAnswered503AfterItsAnswerWasLostMayHaveBeenStoredBlocking() } }

    func aPutAnswered503AfterItsAnswerWasLostMayHaveBeenStoredBlocking() throws {
        guard let (bucket, upstream) = Self.setting() else { return print(Self.skipReason) }
        let proxy = try FaultyGateway(upstreamURL: upstream)
        defer { proxy.stop() }
        let location = S3DaemonTests.location(bucket)
        let daemon = try StallDaemon(location: location, endpoint: proxy.url, transport: TransportConfiguration(timeout: .seconds(2)))
        // Looks at the bucket straight, past the proxy (and with a cache of its own).
        let writer = try StallDaemon(location: location, endpoint: upstream, transport: TransportConfiguration())
        func etag(_ text: String) -> String { "\"\(ETag(checksum: XXH64.hash(Data(text.utf8))).rawValue)\"" }

        let first = try daemon.client().request("PUT", "/v1/stores/s/blobs/replaced", body: Array("first".utf8))
        #expect(first.status == 201 && first.header("ETag") == etag("first"), "\(first.status) \(first.text)")

        // The answer is cut as soon as it starts: the gateway has stored the put by then.
        proxy.inject(.cutResponse(afterBytes: 0))
        for (name, text) in [("cut-new", "a new blob, its answer cut"), ("replaced", "second, its answer cut")] {
            let put = try daemon.client().request("PUT", "/v1/stores/s/blobs/\(name)", body: Array(text.utf8))
            #expect(put.status == 503 && errorCode(put) == "backend_unavailable", "\(name): \(put.status) \(put.text)")
        }
        // The answer never comes: the put times out after 2 s, and is not sent again.
        proxy.inject(.dropResponses)
        let (late, elapsed) = try timed(daemon, "PUT", "/v1/stores/s/blobs/timed-out", body: Array("a new blob, its answer lost".utf8))
        #expect(late.status == 503 && errorCode(late) == "backend_unavailable" && errorMessage(late).contains("timed out"), "\(late.status) \(late.text)")
        #expect(elapsed >= .seconds(2) && elapsed < Self.prompt, "\(elapsed)")
        proxy.inject(.none)

        // Stored, all three, although each was answered 503.
        let expected = ["cut-new": "a new blob, its answer cut", "replaced": "second, its answer cut", "timed-out": "a new blob, its answer lost"]
        for (name, text) in expected.sorted(by: { $0.key < $1.key }) {
            let stored = try writer.client().request("GET", "/v1/stores/s/blobs/\(name)")
            #expect(stored.status == 200 && stored.text == text, "\(name): \(stored.status) \(stored.text)")
        }
        // The conditional retries find them: 412, with the ETag of the content each first attempt sent.
        for name in ["cut-new", "timed-out"] {
            let retry = try daemon.client().request("PUT", "/v1/stores/s/blobs/\(name)", headers: ["If-None-Match": "*"], body: Array(expected[name]!.utf8))
            #expect(retry.status == 412 && retry.header("ETag") == etag(expected[name]!), "\(name): \(retry.status) \(retry.text)")
        }
        let swap = try daemon.client().request(
            "PUT", "/v1/stores/s/blobs/replaced", headers: ["If-Match": etag("first")], body: Array("second, its answer cut".utf8))
        #expect(swap.status == 412 && swap.header("ETag") == etag("second, its answer cut"), "\(swap.status) \(swap.text)")
        #expect(try daemon.client().request("DELETE", "/v1/stores/s/blobs").status == 204)
    }

    /// The whole gateway stalls: blobd (the binary, with `--s3-timeout 3`) answers each request
    /// that needs it `503 backend_unavailable` naming the backend and the timeout, 3 s after it was
    /// sent and well before a second timeout would have passed (a timed-out request is not retried); health is served meanwhile; nothing acknowledged is lost, and once the gateway
    /// answers again the same requests succeed without a restart.
    @Test func aStalledGatewayCostsEachRequestItsTimeoutAndLosesNothing() async throws { try await onOwnThread { try Self().aStalledGatewayCostsEachRequestItsTimeoutAndLosesNothingBlocking() } }

    func aStalledGatewayCostsEachRequestItsTimeoutAndLosesNothingBlocking() throws {
        guard let (bucket, upstream) = Self.setting(), BlobdBinary.url != nil else { return print(Self.skipReason) }
        let proxy = try FaultyGateway(upstreamURL: upstream)
        defer { proxy.stop() }
        let location = S3DaemonTests.location(bucket)
        let folder = TempFolder()
        let daemon = try DaemonProcess(
            folder: folder, extraArguments: ["--backend", location, "--cache", folder.path + "/cache", "--s3-timeout", "3"],
            environment: ["AWS_ENDPOINT_URL": proxy.url])
        defer { daemon.terminate() }
        #expect(daemon.log.contains("S3 timeouts: 3 s for the first answer byte and between pieces of a transfer, 3 s to connect"), "\(daemon.log)")
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/f/blobs/a", body: Array("before".utf8)).status == 201)
        #expect(try client.request("PUT", "/v1/stores/f/blobs/b", body: Array("kept".utf8)).status == 201)
        #expect(try client.request("GET", "/v1/stores/f/blobs/a").text == "before")

        proxy.inject(.stall)
        let requests: [(String, String, [UInt8]?)] = [
            ("GET", "/v1/stores/f/blobs/a", nil), ("PUT", "/v1/stores/f/blobs/c", Array("during".utf8)), ("GET", "/v1/stores/f/blobs", nil),
            ("DELETE", "/v1/stores/f/blobs/b", nil), ("HEAD", "/v1/stores/f/blobs/b", nil),
        ]
        for (method, target, body) in requests {
            let start = ContinuousClock.now
            let response = try client.request(method, target, body: body)
            let elapsed = ContinuousClock.now - start
            #expect(response.status == 503, "\(method) \(target): \(response.status) \(response.text)")
            if method != "HEAD" {
                #expect(errorCode(response) == "backend_unavailable")
                let message = errorMessage(response)
                #expect(message.contains("store 'f' cannot use its backend \(location) at \(proxy.url)"), "\(message)")
                #expect(message.contains("timed out after 3 s waiting for the first response byte"), "\(message)")
            }
            // One timeout, not two.
            #expect(elapsed >= .milliseconds(2900) && elapsed < .milliseconds(5900), "\(method) \(target) took \(elapsed)")
            #expect(try client.request("GET", "/v1/health").status == 200, "health is served meanwhile")
            // A scrape asks the object store nothing: it does not wait for the stalled gateway.
            let scrapeStart = ContinuousClock.now
            let scrape = try client.request("GET", "/metrics")
            let scrapeTime = ContinuousClock.now - scrapeStart
            #expect(scrape.status == 200 && scrapeTime < .milliseconds(2500), "/metrics took \(scrapeTime) during the stall")
            #expect(scrape.text.contains("blobd_requests_total") && !scrape.text.contains("blobstore_store_blobs{store=\"f\"}"), "\(scrape.text)")
        }

        proxy.inject(.none)
        #expect(try client.request("GET", "/v1/stores/f/blobs/a").text == "before")
        #expect(try client.request("GET", "/v1/stores/f/blobs/b").text == "kept", "the stalled DELETE never reached the gateway")
        #expect(try client.request("GET", "/v1/stores/f/blobs/c").status == 404, "the stalled PUT never reached the gateway")
        #expect(try client.request("PUT", "/v1/stores/f/blobs/c", body: Array("after".utf8)).status == 201)
        let listed = try client.request("GET", "/v1/stores/f/blobs")
        #expect(listed.status == 200 && listed.text.contains("\"a\"") && listed.text.contains("\"b\"") && listed.text.contains("\"c\""), "\(listed.text)")
        #expect(try client.request("DELETE", "/v1/stores/f/blobs/b").status == 204)
        #expect(try client.request("DELETE", "/v1/stores/f/blobs").status == 204)
    }

    /// More stalled requests than the transport has connections (64 per endpoint): each of the 64
    /// holds one until its timeout; one more fails `503` after the connect timeout, waiting for a
    /// free connection, instead of queueing behind them; a cache hit and health are served
    /// meanwhile; and once the stalled ones end, every connection is free again.
    @Test func requestsBeyondTheConnectionLimitFailWithinTheConnectTimeout() async throws { try await onOwnThread { try Self().requestsBeyondTheConnectionLimitFailWithinTheConnectTimeoutBlocking() } }

    func requestsBeyondTheConnectionLimitFailWithinTheConnectTimeoutBlocking() throws {
        guard let (bucket, upstream) = Self.setting() else { return print(Self.skipReason) }
        let proxy = try FaultyGateway(upstreamURL: upstream)
        defer { proxy.stop() }
        let location = S3DaemonTests.location(bucket)
        let transport = TransportConfiguration(connectTimeout: .seconds(1), firstByteTimeout: .seconds(15), idleTimeout: .seconds(15))
        let limit = transport.maximumConnectionsPerEndpoint
        let daemon = try StallDaemon(location: location, endpoint: proxy.url, transport: transport, staleness: 600)
        #expect(try daemon.client().request("PUT", "/v1/stores/m/blobs/hot", body: Array("hot".utf8)).status == 201)
        #expect(try daemon.client().request("GET", "/v1/stores/m/blobs/hot").text == "hot", "now in the read cache")

        proxy.inject(.stall)
        let stalled = (0..<limit).map { Pending(daemon.socketPath, "GET", "/v1/stores/m/blobs/cold-\($0)") }
        #expect(proxy.waitForStalledConnections(limit), "\(proxy.stalledConnections) of \(limit) requests reached the gateway")

        let (extra, elapsed) = try timed(daemon, "GET", "/v1/stores/m/blobs/one-more")
        #expect(extra.status == 503 && errorCode(extra) == "backend_unavailable", "\(extra.status) \(extra.text)")
        #expect(errorMessage(extra).contains("timed out after 1 s waiting for a free connection"), "\(errorMessage(extra))")
        #expect(elapsed < .seconds(1) + Self.prompt, "request \(limit + 1) took \(elapsed)")
        let (hit, hitElapsed) = try timed(daemon, "GET", "/v1/stores/m/blobs/hot")
        #expect(hit.status == 200 && hit.text == "hot" && hitElapsed < Self.prompt, "\(hit.status) in \(hitElapsed)")
        #expect(try timed(daemon, "GET", "/v1/health").response.status == 200)
        #expect(stalled.allSatisfy { !$0.hasEnded }, "the stalled requests were still waiting meanwhile")

        // Dropped, the stalled requests end 503; every connection slot is given back.
        proxy.inject(.down)
        for request in stalled {
            let response = try request.response()
            #expect(response.status == 503 && errorCode(response) == "backend_unavailable", "\(response.status) \(response.text)")
        }
        proxy.inject(.none)
        let again = (0..<limit).map { Pending(daemon.socketPath, "PUT", "/v1/stores/m/blobs/again-\($0)", body: Array("again".utf8)) }
        for request in again { #expect(try request.response().status == 201) }
        #expect(try daemon.client().request("GET", "/v1/stores/m/blobs/again-7").text == "again")
        #expect(try daemon.client().request("DELETE", "/v1/stores/m/blobs").status == 204)
    }
}
