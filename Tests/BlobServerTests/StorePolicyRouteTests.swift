import Foundation
import Testing

/// `/v1/stores/{store}` (docs/PROTOCOL.md, "Store policy"): a store created or reconfigured with a
/// JSON policy, read back with its usage; refusals; the policy in `/v1/stores` and `/metrics`; the
/// expiry headers of a PUT checked before anything is stored.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct StorePolicyRouteTests {
    private func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func policy(_ response: RawResponse) -> [String: Any]? { response.json?["policy"] as? [String: Any] }

    @Test func aStoreIsCreatedWithAPolicyAndChangedMemberByMember() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("GET", "/v1/stores/photos").status == 404)

        let created = try client.request("PUT", "/v1/stores/photos", body: body(#"{"maxBytes":2147483648,"defaultTTL":604800}"#))
        #expect(created.status == 201, "\(created.text)")
        #expect(created.header("Content-Type") == "application/json")
        #expect(created.text == #"{"name":"photos","count":0,"bytes":0,"policy":{"maxBytes":2147483648,"maxCount":null,"defaultTTL":604800}}"#)
        #expect(FileManager.default.fileExists(atPath: daemon.root + "/photos"), "the PUT created the store")

        #expect(try client.request("PUT", "/v1/stores/photos/blobs/a", body: body("hello")).status == 201)
        let read = try client.request("GET", "/v1/stores/photos")
        #expect(read.status == 200 && read.json?["count"] as? Int == 1 && read.json?["bytes"] as? Int == 5, "\(read.text)")
        #expect(policy(read)?["maxBytes"] as? Int == 2_147_483_648)
        let head = try client.request("HEAD", "/v1/stores/photos")
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == read.header("Content-Length"))

        // Absent members are kept, null lifts a limit; an existing store answers 200.
        let changed = try client.request("PUT", "/v1/stores/photos", body: body(#"{"maxCount":10,"maxBytes":null,"defaultTTL":1.5}"#))
        #expect(changed.status == 200, "\(changed.text)")
        #expect(changed.text.hasSuffix(#""policy":{"maxBytes":null,"maxCount":10,"defaultTTL":1.5}}"#), "\(changed.text)")
        // No body changes nothing.
        let unchanged = try client.request("PUT", "/v1/stores/photos")
        #expect(unchanged.status == 200 && unchanged.text == changed.text.replacingOccurrences(of: #""count":0,"bytes":0"#, with: #""count":1,"bytes":5"#))

        // The listing and the metrics carry the limits of open stores.
        let stores = try #require(try client.request("GET", "/v1/stores").json?["stores"] as? [[String: Any]])
        let listed = try #require(stores.first { $0["name"] as? String == "photos" }?["policy"] as? [String: Any])
        #expect(listed["maxCount"] as? Int == 10 && listed["maxBytes"] is NSNull)
        let metrics = try client.request("GET", "/metrics").text
        #expect(metrics.contains("blobstore_store_max_blobs{store=\"photos\"} 10\n"))
        #expect(!metrics.contains("blobstore_store_max_bytes{store=\"photos\"}"))
        #expect(metrics.contains("# TYPE blobstore_store_expired_total counter\n") && metrics.contains("# TYPE blobstore_store_evicted_total counter\n"))
        #expect(metrics.contains("blobd_requests_total{operation=\"stores\"} 7\n"), "GET, HEAD and PUT of a store count as stores, as GET /v1/stores does")
    }

    @Test func aRefusedPolicyNamesTheMemberAndCreatesNothing() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let cases: [(String, String)] = [
            (#"{"maxBytes":0}"#, "maxBytes must be a whole number of bytes from 1 to 9223372036854775807, or null for no limit (got 0)"),
            (#"{"maxCount":-3}"#, "maxCount must be a whole number of blobs from 1 to 9223372036854775807, or null for no limit (got -3)"),
            (#"{"defaultTTL":"7d"}"#, #"defaultTTL must be a number of seconds from 0.001 to 3155760000, or null for no expiry (got "7d")"#),
            (#"{"ttl":60}"#, "unknown policy member 'ttl'; the members are maxBytes, maxCount and defaultTTL"),
            ("[]", #"the policy must be a JSON object such as {"maxBytes":1073741824,"maxCount":null,"defaultTTL":3600}"#),
            ("{", "the policy is not valid JSON: {"),
        ]
        for (json, message) in cases {
            let refused = try client.request("PUT", "/v1/stores/cache", body: body(json))
            #expect(refused.status == 400, "\(json): \(refused.text)")
            let error = refused.json?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "invalid_policy" && error?["message"] as? String == message, "\(refused.text)")
        }
        let tooLarge = try client.request("PUT", "/v1/stores/cache", body: body("{" + String(repeating: " ", count: 70_000) + "}"))
        #expect(tooLarge.status == 413 && (tooLarge.json?["error"] as? [String: Any])?["code"] as? String == "too_large", "\(tooLarge.text)")
        let client2 = try daemon.connect()
        #expect(try client2.request("GET", "/v1/stores/cache").status == 404)
        #expect(!FileManager.default.fileExists(atPath: daemon.root + "/cache"), "a refused policy leaves no store behind")
        #expect(try client2.request("PUT", "/v1/stores/Bad", body: body("{}")).status == 400)
        let wrong = try client2.request("DELETE", "/v1/stores/cache")
        #expect(wrong.status == 405 && wrong.header("Allow") == "GET, HEAD, PUT")
    }

    @Test func aPutsExpiryHeadersAreCheckedBeforeAnythingIsStored() throws {
        let daemon = try DaemonProcess(extraArguments: ["--backend", "memory"])
        let client = try daemon.connect()
        let refusals: [([String: String], String)] = [
            (["Blob-Expires": "tomorrow"], "Blob-Expires must be 'never', an RFC 3339 date"),
            (["Cache-Control": "max-age=soon"], "Cache-Control: max-age must be a whole number of seconds from 0 to 3155760000"),
            (["Blob-Expires": "never", "Cache-Control": "max-age=60"], "send either Blob-Expires or Cache-Control: max-age, not both"),
        ]
        for (headers, message) in refusals {
            let refused = try client.request("PUT", "/v1/stores/notes/blobs/a", headers: headers, body: body("x"))
            let error = refused.json?["error"] as? [String: Any]
            #expect(refused.status == 400 && error?["code"] as? String == "bad_request", "\(refused.text)")
            #expect((error?["message"] as? String)?.hasPrefix(message) == true, "\(refused.text)")
        }
        // The directives of every Cache-Control field count: two fields with different max-ages are refused.
        try client.send("PUT /v1/stores/notes/blobs/a HTTP/1.1\r\nHost: blobd\r\nCache-Control: max-age=60\r\nCache-Control: max-age=30\r\nContent-Length: 1\r\n\r\nx")
        let twoFields = try client.readResponse(method: "PUT")
        #expect(twoFields.status == 400 && (twoFields.json?["error"] as? [String: Any])?["message"] as? String == "Cache-Control has two different max-age directives", "\(twoFields.text)")
        #expect(try client.request("GET", "/v1/stores/notes").status == 404, "nothing was stored")
        for headers in [["Blob-Expires": "never"], ["Blob-Expires": "2099-01-01T00:00:00Z"], ["Cache-Control": "public, max-age=3600"]] {
            #expect(try client.request("PUT", "/v1/stores/notes/blobs/a", headers: headers, body: body("x")).status < 300)
        }
        // The same max-age in two fields counts once; a max-age in the second field alone is taken.
        for second in ["max-age=3600", "no-cache"] {
            try client.send("PUT /v1/stores/notes/blobs/b HTTP/1.1\r\nHost: blobd\r\nCache-Control: public, max-age=3600\r\nCache-Control: \(second)\r\nContent-Length: 1\r\n\r\nx")
            let taken = try client.readResponse(method: "PUT")
            #expect(taken.status < 300 && taken.header("Blob-Expires") != nil, "\(second): \(taken.text)")
        }
        try client.send("PUT /v1/stores/notes/blobs/c HTTP/1.1\r\nHost: blobd\r\nCache-Control: no-cache\r\nCache-Control: max-age=60\r\nContent-Length: 1\r\n\r\nx")
        let secondField = try client.readResponse(method: "PUT")
        #expect(secondField.status == 201 && secondField.header("Blob-Expires") != nil, "\(secondField.text)")
        // Without max-age, Cache-Control asks for nothing and may come with Blob-Expires.
        let both = try client.request("PUT", "/v1/stores/notes/blobs/d", headers: ["Blob-Expires": "never", "Cache-Control": "no-cache"], body: body("x"))
        #expect(both.status == 201 && both.header("Blob-Expires") == nil, "\(both.text)")
    }
}
