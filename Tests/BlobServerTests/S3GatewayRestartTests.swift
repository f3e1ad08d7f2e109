import BlobStore
import BlobSystem
import BlobTestSupport
import Foundation
import S3BlobStore
import Testing

/// blobd on S3 while the real gateway (radosgw, not a proxy) is stopped and started again: requests
/// that need the object store fail `503 backend_unavailable` at once (not a hang, not a `404`), and
/// once the gateway is back the same blobd, never restarted, serves gets and puts again with every
/// acknowledged blob intact (docs/SCALE-OUT.md, "blobd and blob on S3").
///
/// The gateway stopped is that of a cluster of the test's own (`.ci/ceph up`, inside the folder of
/// the cluster the other tests use, so that `.ci/ceph down` of that one stops it too if the test
/// could not): the gateway every other test uses, in parallel, in this process or another, never
/// stops. (A second radosgw over the shared cluster would not do: it takes part in delivering the
/// persistent topics' notifications, and a topic it had claimed delivered nothing for 80-110 s
/// after it stopped, which failed the notification tests running beside it.) Needs
/// `BLOB_CEPH_DIR`, which `.ci/ceph up DIR` exports in DIR/env; skipped, saying why, without it.
@Suite(.timeLimit(.minutes(3)))
struct S3GatewayRestartTests {
    static let skipReason =
        "S3GatewayRestartTests: skipped, no gateway cluster folder (run .ci/ceph up DIR and source DIR/env for BLOB_CEPH_DIR)"

    /// How long a request that does not wait for a timeout may take here, generously: less than
    /// the timeouts the daemon is given (``transport``).
    static let prompt: Duration = .seconds(8)

    /// Timeouts well beyond ``prompt``, so a request answered within it waited for none.
    static let transport: TransportConfiguration = {
        var transport = TransportConfiguration(timeout: .seconds(30))
        transport.connectTimeout = .seconds(30)
        return transport
    }()

    /// A single-node cluster of this test's own, inside `parent`, run by `.ci/ceph`.
    final class OwnCluster {
        let folder: String
        /// The AWS settings of its gateway (DIR/env: endpoint, keys, region, bucket).
        let variables: [String: String]
        private let script = BuiltTool.packageRoot.appendingPathComponent(".ci/ceph").path

        /// Brings it up; throws saying what `.ci/ceph` printed when it cannot.
        init(parent: String) throws {
            folder = parent + "/restart-" + UUID().uuidString.prefix(8).lowercased()
            let up = try runProgram(script, ["up", folder])
            guard up.status == 0 else { throw HarnessError(".ci/ceph up \(folder) exited \(up.status): \(up.errorText)") }
            var variables: [String: String] = [:]
            for line in try String(contentsOfFile: folder + "/env", encoding: .utf8).split(separator: "\n") where line.hasPrefix("export ") {
                let assignment = line.dropFirst("export ".count)
                guard let equals = assignment.firstIndex(of: "=") else { continue }
                variables[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
            }
            // Its endpoint whatever this process's environment says.
            variables["AWS_ENDPOINT_URL_S3"] = variables["AWS_ENDPOINT_URL"]
            self.variables = variables
        }

        var endpoint: String { variables["AWS_ENDPOINT_URL"] ?? "" }
        var bucket: String { variables["BLOB_S3_BUCKET"] ?? "" }

        /// Stops its gateway by its pid, and waits until its port refuses connections.
        func stopGateway() throws { _ = try run("stop-rgw") }

        /// Starts its gateway again, on the same port; its endpoint.
        func startGateway() throws -> String {
            String(try run("start-rgw").split(separator: "\n").last ?? "")
        }

        /// Stops every daemon and removes the folder.
        func down() { _ = try? run("down") }

        private func run(_ command: String) throws -> String {
            let run = try runProgram(script, [command, folder])
            guard run.status == 0 else { throw HarnessError(".ci/ceph \(command) \(folder) exited \(run.status): \(run.errorText)") }
            return run.outputText
        }
    }

    private func errorCode(_ response: RawResponse) -> String? {
        response.json.flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    private func errorMessage(_ response: RawResponse) -> String {
        response.json.flatMap { ($0["error"] as? [String: Any])?["message"] as? String } ?? response.text
    }

    @Test func aStoppedGatewayIs503AtOnceAndTheSameBlobdServesAgainOnceItIsBack() async throws {
        try await onOwnThread { try Self().aStoppedGatewayIs503AtOnceAndTheSameBlobdServesAgainOnceItIsBackBlocking() }
    }

    func aStoppedGatewayIs503AtOnceAndTheSameBlobdServesAgainOnceItIsBackBlocking() throws {
        guard let parent = ProcessInfo.processInfo.environment["BLOB_CEPH_DIR"], !parent.isEmpty else { return print(Self.skipReason) }
        let cluster = try OwnCluster(parent: parent)
        defer { cluster.down() }
        let location = "s3://\(cluster.bucket)/restart"
        let daemon = try S3DaemonTests.InProcessDaemon(location: location, transport: Self.transport, variables: cluster.variables)
        func request(_ method: String, _ target: String, body: [UInt8]? = nil) throws -> (response: RawResponse, elapsed: Duration) {
            let start = ContinuousClock.now
            let response = try daemon.client().request(method, target, body: body)
            return (response, ContinuousClock.now - start)
        }

        var acknowledged: [String: [UInt8]] = [:]
        for (name, content) in [("small", Array("before the stop".utf8)), ("large", Array(pseudoRandomBytes(1 << 20, seed: 23)))] {
            let put = try request("PUT", "/v1/stores/r/blobs/\(name)", body: content).response
            #expect(put.status == 201, "\(name): \(put.status) \(put.text)")
            acknowledged[name] = content
        }
        #expect(try request("GET", "/v1/stores/r/blobs/small").response.body == acknowledged["small"], "now in the read cache")

        try cluster.stopGateway()
        let checks: [(String, String, [UInt8]?)] = [
            ("GET", "/v1/stores/r/blobs/small", nil),  // in the read cache, which must not serve it unvalidated
            ("GET", "/v1/stores/r/blobs/large", nil),
            ("PUT", "/v1/stores/r/blobs/during", Array("while the gateway is stopped".utf8)),
            ("GET", "/v1/stores/r/blobs", nil),
        ]
        for (method, target, body) in checks {
            let (response, elapsed) = try request(method, target, body: body)
            #expect(response.status == 503 && errorCode(response) == "backend_unavailable", "\(method) \(target): \(response.status) \(response.text.prefix(300))")
            #expect(errorMessage(response).contains("store 'r' cannot use its backend \(location) at \(cluster.endpoint)"), "\(errorMessage(response))")
            #expect(elapsed < Self.prompt, "\(method) \(target) took \(elapsed): a stopped gateway refuses connections at once, no timeout is waited for")
        }
        #expect(try request("GET", "/v1/health").response.status == 200, "other requests are served meanwhile")

        #expect(try cluster.startGateway() == cluster.endpoint, "the gateway is back on its port")
        let notModifiedBefore = daemon.cache.counters.notModified
        #expect(try request("GET", "/v1/stores/r/blobs/small").response.body == acknowledged["small"])
        #expect(daemon.cache.counters.notModified == notModifiedBefore + 1, "the entry kept through the outage was validated and served")
        #expect(try request("GET", "/v1/stores/r/blobs/during").response.status == 404, "the put refused while the gateway was stopped stored nothing")
        let put = try request("PUT", "/v1/stores/r/blobs/during", body: Array("after the restart".utf8)).response
        #expect(put.status == 201, "\(put.status) \(put.text)")
        acknowledged["during"] = Array("after the restart".utf8)
        for (name, content) in acknowledged.sorted(by: { $0.key < $1.key }) {
            let get = try request("GET", "/v1/stores/r/blobs/\(name)").response
            #expect(get.status == 200 && get.body == content, "\(name): \(get.status)")
        }
        let listed = try request("GET", "/v1/stores/r/blobs").response
        let items = (listed.json?["items"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String }
        #expect(items == ["during", "large", "small"], "\(listed.text.prefix(300))")
    }
}
