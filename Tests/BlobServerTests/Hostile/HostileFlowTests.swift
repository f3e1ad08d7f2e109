import Foundation
import Testing

/// Wrong methods, `Expect: 100-continue` refusals, requests in 1-byte writes, and garbage
/// pipelined after good requests.
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct HostileFlowTests {
    static let methodCases: [HostileCase] = {
        let readOnly = "GET, HEAD"
        let health = "GET, HEAD"
        let blobs = "GET, HEAD, DELETE"
        let blob = "GET, HEAD, PUT, DELETE"
        let table: [(String, String, String)] = [
            ("POST", "/v1/health", health),
            ("PUT", "/v1/health", health),
            ("DELETE", "/v1/health", health),
            ("OPTIONS", "/v1/health", health),
            ("PATCH", "/v1/health", health),
            ("POST", "/v1/stores", readOnly),
            ("DELETE", "/v1/stores", readOnly),
            ("PUT", "/v1/events", readOnly),
            ("DELETE", "/metrics", readOnly),
            // POST …/verify repairs (PROTOCOL.md).
            ("DELETE", "/v1/stores/flow/verify", "GET, HEAD, POST"),
            ("PUT", "/v1/stores/flow/verify", "GET, HEAD, POST"),
            ("POST", "/v1/events", readOnly),
            ("PUT", "/v1/stores/flow/blobs", blobs),
            ("POST", "/v1/stores/flow/blobs", blobs),
            ("PATCH", "/v1/stores/flow/blobs", blobs),
            ("POST", "/v1/stores/flow/blobs/x", blob),
            ("PATCH", "/v1/stores/flow/blobs/x", blob),
            ("OPTIONS", "/v1/stores/flow/blobs/x", blob),
            ("TRACE", "/v1/stores/flow/blobs/x", blob),
            ("CONNECT", "/v1/stores/flow/blobs/x", blob),
            ("put", "/v1/stores/flow/blobs/x", blob),
            ("delete", "/v1/stores/flow/blobs/x", blob),
        ]
        var cases = table.map { method, path, allow in
            HostileCase("\(method) \(path)", Hostile.request("\(method) \(path) HTTP/1.1"), [.error(405, "method_not_allowed", allow: allow, method: method)], .open)
        }
        for path in ["/", "/v1", "/v2/health", "/v1/health/", "/v1/stores/flow", "/v1/stores/flow/", "/v1/stores/flow/blob", "/v1/stores/flow/verify/x", "/metrics/", "/v1/stores/flow/blobsx"] {
            cases.append(HostileCase("unknown path \(path)", Hostile.get(path), [.error(404, "not_found")], .open))
        }
        return cases
    }()

    static func expectPut(_ target: String, _ fields: [String], length: Int = 5) -> String {
        "PUT \(target) HTTP/1.1\r\nHost: blobd\r\nExpect: 100-continue\r\nContent-Length: \(length)\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Refused before the body: the final error at once (no 100), then the connection closes.
    static let expectCases: [HostileCase] = [
        HostileCase("Expect + bad store name", expectPut("/v1/stores/BAD/blobs/x", []), [.error(400, "invalid_store_name")], .closed),
        HostileCase("Expect + store ..", expectPut("/v1/stores/../blobs/x", []), [.error(400, "invalid_store_name")], .closed),
        HostileCase("Expect + bad metadata key", expectPut("/v1/stores/flow/blobs/x", ["Blob-Meta-Bad.Key: v"]), [.error(400, "invalid_metadata")], .closed),
        HostileCase("Expect + 1025-byte value", expectPut("/v1/stores/flow/blobs/x", ["Blob-Meta-k: " + String(repeating: "v", count: 1025)]), [.error(400, "invalid_metadata")], .closed),
        HostileCase("Expect + 65 metadata pairs", expectPut("/v1/stores/flow/blobs/x", (0..<65).map { "Blob-Meta-k\($0): v" }), [.error(400, "invalid_metadata")], .closed),
        HostileCase("Expect + bad Blob-Validate", expectPut("/v1/stores/flow/blobs/x", ["Blob-Validate: maybe"]), [.badRequest], .closed),
        HostileCase("Expect + If-Match *", expectPut("/v1/stores/flow/blobs/x", ["If-Match: *"]), [.badRequest], .closed),
        HostileCase("Expect + If-None-Match tag", expectPut("/v1/stores/flow/blobs/x", ["If-None-Match: \"0123456789abcdef\""]), [.badRequest], .closed),
        HostileCase("Expect + 1025-byte id", expectPut("/v1/stores/flow/blobs/" + String(repeating: "k", count: 1025), []), [.error(400, "invalid_identifier")], .closed),
        HostileCase("Expect + encoded NUL", expectPut("/v1/stores/flow/blobs/%00", []), [.error(400, "invalid_identifier")], .closed),
        HostileCase("Expect + dot segment", expectPut("/v1/stores/flow/blobs/a/../x", []), [.error(400, "invalid_identifier")], .closed),
        HostileCase("Expect + wrong method", "POST /v1/stores/flow/blobs/x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", [.error(405, "method_not_allowed", allow: "GET, HEAD, PUT, DELETE")], .closed),
        HostileCase("Expect + unknown path", "PUT /nowhere HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", [.error(404, "not_found")], .closed),
        HostileCase("Expect + 2 TiB declared", expectPut("/v1/stores/flow/blobs/huge", [], length: 2 << 40), [.error(413, "too_large")], .closed),
        HostileCase("Expect + 1 TiB + 1 declared", expectPut("/v1/stores/flow/blobs/huge", [], length: (1 << 40) + 1), [.error(413, "too_large")], .closed),
        HostileCase("Expect + acceptable", expectPut("/v1/stores/flow/blobs/continued", []) + "hello", [.ok(100), .ok(201)], .open),
    ]

    static let trickleCases: [HostileCase] = [
        HostileCase("1-byte writes: health", Hostile.get("/v1/health"), [.ok()], .open, trickle: true),
        HostileCase("1-byte writes: PUT", Hostile.put("/v1/stores/flow/blobs/trickled", body: "trickled body"), [.ok(201)], .open, trickle: true),
        HostileCase("1-byte writes: chunked PUT", "PUT /v1/stores/flow/blobs/trickled-chunks HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nT: v\r\n\r\n", [.ok(201)], .open, trickle: true),
        HostileCase("1-byte writes: Expect PUT", expectPut("/v1/stores/flow/blobs/trickled-expect", []) + "12345", [.ok(100), .ok(201)], .open, trickle: true),
        HostileCase("1-byte writes: two pipelined", Hostile.get("/v1/health") + Hostile.get("/v1/stores/flow/blobs/trickled"), [.ok(), .ok()], .open, trickle: true),
        HostileCase("1-byte writes: malformed", "GET /v1/health HTTP/1.1\r\nBad Header\r\n\r\n", [.badRequest], .closed, trickle: true),
        HostileCase("1-byte writes: 101 fields", "GET /v1/health HTTP/1.1\r\n" + (0..<101).map { "X-\($0): v\r\n" }.joined() + "\r\n", [.error(431, "bad_request")], .closed, trickle: true),
        HostileCase("1-byte writes: bad chunk", "PUT /v1/stores/flow/blobs/trickled-bad HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX", [.badRequest], .closed, trickle: true),
    ]

    static let pipelineCases: [HostileCase] = [
        HostileCase("good then garbage", Hostile.get("/v1/health") + "GARBAGE\r\n\r\n", [.ok(), .badRequest], .closed),
        HostileCase("good then binary", Array(Hostile.get("/v1/health").utf8) + [0, 1, 2, 0xFF, 13, 10, 13, 10], [.ok(), .badRequest], .closed),
        HostileCase("good then HTTP/2.0", Hostile.get("/v1/health") + Hostile.request("GET /v1/health HTTP/2.0"), [.ok(), .error(505, "bad_request")], .closed),
        HostileCase("good then header flood", Hostile.get("/v1/health") + "GET /v1/health HTTP/1.1\r\n" + (0..<101).map { "X-\($0): v\r\n" }.joined() + "\r\n", [.ok(), .error(431, "bad_request")], .closed),
        HostileCase("PUT then garbage", Hostile.put("/v1/stores/flow/blobs/piped", body: "piped") + "\u{7}\u{7}\r\n\r\n", [.ok(201), .badRequest], .closed),
        HostileCase("three good, garbage, good", Hostile.get("/v1/health") + Hostile.get("/v1/stores/flow/blobs/piped") + Hostile.request("HEAD /v1/health HTTP/1.1") + "NOT HTTP\r\n\r\n" + Hostile.get("/v1/health"), [.ok(), .ok(), .ok(method: "HEAD"), .badRequest], .closed),
        HostileCase("good then bad chunked PUT", Hostile.get("/v1/health") + "PUT /v1/stores/flow/blobs/piped-bad HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", [.ok(), .badRequest], .closed),
        HostileCase("good then Content-Length conflict", Hostile.get("/v1/health") + "PUT /v1/stores/flow/blobs/p HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", [.ok(), .badRequest], .closed),
        HostileCase("error then good still answered", Hostile.get("/v1/stores/flow/blobs/missing") + Hostile.get("/v1/health"), [.error(404, "not_found"), .ok()], .open),
        HostileCase("405 then good", Hostile.request("POST /v1/health HTTP/1.1") + Hostile.get("/v1/health"), [.error(405, "method_not_allowed", allow: "GET, HEAD"), .ok()], .open),
        HostileCase("Connection: close then more", Hostile.get("/v1/health", ["Connection: close"]) + Hostile.get("/v1/health"), [.ok()], .closed),
    ]

    @Test func methodsOnWrongRoutes() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        Hostile.run(Self.methodCases, on: daemon)
        Hostile.checkSurvived(daemon, group: "methods on wrong routes")
    }

    @Test func expectContinueRefusals() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        Hostile.run(Self.expectCases, on: daemon)
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/flow/blobs/x")).status == 404, "a refused Expect PUT stored something")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/flow/blobs/continued")).text == "hello")
        // Refused PUTs to a store never written leave no store folder.
        let refused = HostileCase("Expect + bad metadata, new store", Self.expectPut("/v1/stores/never/blobs/x", ["Blob-Meta-Bad.Key: v"]), [.error(400, "invalid_metadata")], .closed)
        Hostile.run([refused, HostileCase("list the store never written", Hostile.get("/v1/stores/never/blobs"), [.error(404, "not_found")], .open)], on: daemon)
        Hostile.checkSurvived(daemon, group: "Expect: 100-continue")
    }

    @Test func oneByteWritesAndPipelinedGarbage() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        Hostile.run(Self.trickleCases + Self.pipelineCases, on: daemon)
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/flow/blobs/trickled")).text == "trickled body")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/flow/blobs/trickled-chunks")).text == "hello world")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/flow/blobs/trickled-expect")).text == "12345")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/flow/blobs/trickled-bad")).status == 404)
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/flow/blobs/piped-bad")).status == 404)
        Hostile.checkSurvived(daemon, group: "1-byte writes and pipelining")
    }
}
