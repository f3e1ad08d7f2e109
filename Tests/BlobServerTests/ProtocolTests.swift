import BlobSystem
import Foundation
import Testing

/// End-to-end protocol tests: each starts its own `blobd` on a temp root and talks raw HTTP to it.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct ProtocolTests {
    private func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test func healthAnswersOK() throws {
        let daemon = try DaemonProcess()
        let response = try daemon.connect().request("GET", "/v1/health")
        #expect(response.status == 200)
        #expect(response.text == #"{"status":"ok"}"#)
        #expect(response.header("Content-Type") == "application/json")
    }

    @Test func putAndGetOneMebibyteIsByteExact() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let content = randomBytes(1 << 20)
        let put = try client.request("PUT", "/v1/stores/bin/blobs/dir/file.bin", body: content)
        #expect(put.status == 201)
        #expect(put.json?["size"] as? Int == 1 << 20)
        let get = try client.request("GET", "/v1/stores/bin/blobs/dir/file.bin")
        #expect(get.status == 200)
        #expect(get.header("Content-Length") == "1048576")
        #expect(get.body == content)
        // The same connection still works after a sendfile body.
        #expect(try client.request("GET", "/v1/health").status == 200)
    }

    @Test(.enabled(if: SocketMemory.skipReason == nil, "\(SocketMemory.skipReason ?? "")"))
    func largeBodiesGetALargerSendBufferOnlyOnTheirConnection() throws {
        let daemon = try DaemonProcess()
        let large = try daemon.connect(), small = try daemon.connect()
        let content = randomBytes(1 << 20)
        #expect(try large.request("PUT", "/v1/stores/buf/blobs/large", body: content).status == 201)
        #expect(try small.request("PUT", "/v1/stores/buf/blobs/small", body: randomBytes(4096)).status == 201)
        let before = try SocketMemory.daemonSendBuffer(peerOf: large.fd)
        #expect(try large.request("GET", "/v1/stores/buf/blobs/large").body == content)
        #expect(try small.request("GET", "/v1/stores/buf/blobs/small").status == 200)
        // Linux doubles what is asked (1 MiB) and caps it at twice net.core.wmem_max.
        let raised = min(2 << 20, 2 * (SocketMemory.wmemMax ?? Int.max))
        #expect(try SocketMemory.daemonSendBuffer(peerOf: large.fd) == raised, "before the GET: \(before)")
        #expect(try SocketMemory.daemonSendBuffer(peerOf: small.fd) == before)
        #expect(before < raised)
    }

    @Test func metadataHeadersRoundTrip() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let put = try client.request(
            "PUT", "/v1/stores/meta/blobs/note%20one.txt",
            headers: ["Content-Type": "text/plain", "Blob-Meta-Author": "Ada", "Blob-Meta-lang": "en"], body: Array("hi".utf8))
        #expect(put.status == 201)
        #expect(put.json?["identifier"] as? String == "note one.txt")
        let etag = try #require(put.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.count == 18)
        let get = try client.request("GET", "/v1/stores/meta/blobs/note%20one.txt")
        #expect(get.header("Content-Type") == "text/plain")
        #expect(get.header("ETag") == etag)
        #expect(get.header("Blob-Meta-author") == "Ada")
        #expect(get.header("Blob-Meta-lang") == "en")
        #expect(get.header("Last-Modified")?.hasSuffix(" GMT") == true)
        #expect(get.header("Blob-Created")?.hasSuffix("Z") == true)
        let replaced = try client.request("PUT", "/v1/stores/meta/blobs/note%20one.txt", body: Array("hello".utf8))
        #expect(replaced.status == 200)
        #expect(replaced.header("ETag") != etag)
        let bad = try client.request("PUT", "/v1/stores/meta/blobs/x", headers: ["Blob-Meta-Bad.Key": "v"], body: [1])
        #expect(bad.status == 400)
        #expect(bad.errorCode == "invalid_metadata")
    }

    @Test func conditionalRequests() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let first = try client.request("PUT", "/v1/stores/c/blobs/k", headers: ["If-None-Match": "*"], body: [1, 2, 3])
        #expect(first.status == 201)
        let second = try client.request("PUT", "/v1/stores/c/blobs/k", headers: ["If-None-Match": "*"], body: [4])
        #expect(second.status == 412)
        #expect(second.errorCode == "precondition_failed")
        let etag = try #require(first.header("ETag"))
        let wrong = try client.request("PUT", "/v1/stores/c/blobs/k", headers: ["If-Match": "\"0123456789abcdef\""], body: [5])
        #expect(wrong.status == 412)
        let right = try client.request("PUT", "/v1/stores/c/blobs/k", headers: ["If-Match": etag], body: [6])
        #expect(right.status == 200)
        let newTag = try #require(right.header("ETag"))
        let notModified = try client.request("GET", "/v1/stores/c/blobs/k", headers: ["If-None-Match": newTag])
        #expect(notModified.status == 304)
        #expect(notModified.header("ETag") == newTag)
        let modified = try client.request("GET", "/v1/stores/c/blobs/k", headers: ["If-None-Match": etag])
        #expect(modified.status == 200)
        #expect(modified.body == [6])
    }

    @Test func rangeRequests() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        _ = try client.request("PUT", "/v1/stores/r/blobs/digits", body: Array("0123456789".utf8))
        let middle = try client.request("GET", "/v1/stores/r/blobs/digits", headers: ["Range": "bytes=2-4"])
        #expect(middle.status == 206)
        #expect(middle.text == "234")
        #expect(middle.header("Content-Range") == "bytes 2-4/10")
        let open = try client.request("GET", "/v1/stores/r/blobs/digits", headers: ["Range": "bytes=7-"])
        #expect(open.text == "789")
        let suffix = try client.request("GET", "/v1/stores/r/blobs/digits", headers: ["Range": "bytes=-3"])
        #expect(suffix.text == "789")
        let beyond = try client.request("GET", "/v1/stores/r/blobs/digits", headers: ["Range": "bytes=10-20"])
        #expect(beyond.status == 416)
        #expect(beyond.header("Content-Range") == "bytes */10")
        #expect(beyond.errorCode == "range_not_satisfiable")
        // A large blob's range goes out with sendfile.
        let big = randomBytes(300_000)
        _ = try client.request("PUT", "/v1/stores/r/blobs/big", body: big)
        let tail = try client.request("GET", "/v1/stores/r/blobs/big", headers: ["Range": "bytes=100000-"])
        #expect(tail.status == 206)
        #expect(tail.body == Array(big[100_000...]))
        // Whole and ranged large bodies go out with sendfile from the right offsets, including ranges that
        // start inside and beyond the first 64 KiB (what a GET reads with the header).
        let whole = try client.request("GET", "/v1/stores/r/blobs/big")
        #expect(whole.header("Content-Length") == "300000")
        #expect(whole.body == big)
        for start in [1, 65_000, 65_300, 65_400, 65_535, 65_536, 66_000] {
            let part = try client.request("GET", "/v1/stores/r/blobs/big", headers: ["Range": "bytes=\(start)-\(start + 150_000)"])
            #expect(part.status == 206)
            #expect(part.header("Content-Length") == "150001")
            #expect(part.body == Array(big[start...(start + 150_000)]), "range from \(start)")
        }
        #expect(client.pending.isEmpty)
    }

    @Test func headHasNoBody() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        _ = try client.request("PUT", "/v1/stores/h/blobs/x", body: Array(repeating: 7, count: 100_000))
        let head = try client.request("HEAD", "/v1/stores/h/blobs/x")
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "100000")
        // If HEAD had sent a body, this response would be garbage.
        let health = try client.request("GET", "/v1/health")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"#)
        #expect(client.pending.isEmpty)
        // Errors to HEAD have no body either.
        let missing = try client.request("HEAD", "/v1/stores/h/blobs/missing")
        #expect(missing.status == 404)
        #expect(try client.request("GET", "/v1/health").status == 200)
        #expect(client.pending.isEmpty)
    }

    @Test func listPagesAndStores() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        for name in ["a1", "a2", "a3", "b1"] {
            #expect(try client.request("PUT", "/v1/stores/l/blobs/\(name)", headers: ["Content-Type": "text/plain"], body: [1, 2]).status == 201)
        }
        _ = try client.request("PUT", "/v1/stores/other/blobs/z", body: [1, 2, 3])
        let first = try client.request("GET", "/v1/stores/l/blobs?prefix=a&limit=2")
        #expect(first.status == 200)
        let items = try #require(first.json?["items"] as? [[String: Any]])
        #expect(items.map { $0["identifier"] as? String } == ["a1", "a2"])
        let cursor = try #require(first.json?["nextCursor"] as? String)
        let second = try client.request("GET", "/v1/stores/l/blobs?prefix=a&limit=2&cursor=\(cursor)")
        let rest = try #require(second.json?["items"] as? [[String: Any]])
        #expect(rest.map { $0["identifier"] as? String } == ["a3"])
        #expect(second.json?["nextCursor"] is NSNull)
        let badLimit = try client.request("GET", "/v1/stores/l/blobs?limit=0")
        #expect(badLimit.status == 400)
        #expect(badLimit.errorCode == "invalid_query")
        let missing = try client.request("GET", "/v1/stores/nope/blobs")
        #expect(missing.status == 404)
        let stores = try client.request("GET", "/v1/stores")
        let list = try #require(stores.json?["stores"] as? [[String: Any]])
        #expect(list.map { $0["name"] as? String } == ["l", "other"])
        #expect(list.first?["count"] as? Int == 4)
        #expect(list.last?["bytes"] as? Int == 3)
    }

    @Test func deleteAndDeleteAll() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let put = try client.request("PUT", "/v1/stores/d/blobs/x", body: [1])
        _ = try client.request("PUT", "/v1/stores/d/blobs/y", body: [2])
        let wrong = try client.request("DELETE", "/v1/stores/d/blobs/x", headers: ["If-Match": "\"0000000000000000\""])
        #expect(wrong.status == 412)
        let right = try client.request("DELETE", "/v1/stores/d/blobs/x", headers: ["If-Match": put.header("ETag")!])
        #expect(right.status == 204)
        let again = try client.request("DELETE", "/v1/stores/d/blobs/x")
        #expect(again.status == 404)
        #expect(again.errorCode == "not_found")
        #expect(try client.request("GET", "/v1/stores/d/blobs/x").status == 404)
        #expect(try client.request("DELETE", "/v1/stores/d/blobs").status == 204)
        #expect(try client.request("GET", "/v1/stores/d/blobs/y").status == 404)
        let list = try client.request("GET", "/v1/stores/d/blobs")
        #expect((list.json?["items"] as? [Any])?.isEmpty == true)
    }

    @Test func pipelinedRequestsAnswerInOrder() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        var batch = ""
        for i in 0..<5 {
            batch += "PUT /v1/stores/p/blobs/n\(i) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n\(i)\(i)"
        }
        batch += "GET /v1/stores/p/blobs?limit=10 HTTP/1.1\r\nHost: x\r\n\r\n"
        for i in 0..<5 { batch += "GET /v1/stores/p/blobs/n\(i) HTTP/1.1\r\nHost: x\r\n\r\n" }
        try client.send(batch)
        for i in 0..<5 {
            let put = try client.readResponse(method: "PUT")
            #expect(put.status == 201)
            #expect(put.json?["identifier"] as? String == "n\(i)")
        }
        let list = try client.readResponse()
        #expect((list.json?["items"] as? [Any])?.count == 5)
        for i in 0..<5 {
            let get = try client.readResponse()
            #expect(get.text == "\(i)\(i)")
        }
    }

    @Test func chunkedUpload() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let content = randomBytes(200_000)
        var body: [UInt8] = []
        var offset = 0
        for size in [1, 70_000, 99_999, 30_000] {
            body += Array(String(size, radix: 16).utf8) + [13, 10] + content[offset..<(offset + size)] + [13, 10]
            offset += size
        }
        body += Array("0\r\n\r\n".utf8)
        try client.send(Array("PUT /v1/stores/ch/blobs/c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        // Send in pieces so chunk framing is split across reads.
        for start in stride(from: 0, to: body.count, by: 8191) {
            try client.send(Array(body[start..<min(start + 8191, body.count)]))
        }
        let put = try client.readResponse(method: "PUT")
        #expect(put.status == 201)
        #expect(put.json?["size"] as? Int == 200_000)
        #expect(try client.request("GET", "/v1/stores/ch/blobs/c").body == content)
    }

    @Test func expectContinue() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        try client.send("PUT /v1/stores/e/blobs/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse(method: "PUT")
        #expect(interim.status == 100)
        try client.send("hello")
        let put = try client.readResponse(method: "PUT")
        #expect(put.status == 201)
        // A refused put with 100-continue gets its error at once, without the body.
        let other = try daemon.connect()
        try other.send("PUT /v1/stores/BAD/blobs/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let refused = try other.readResponse(method: "PUT")
        #expect(refused.status == 400)
        #expect(refused.errorCode == "invalid_store_name")
    }

    @Test func malformedRequestGets400AndDaemonKeepsServing() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        try client.send("GARBAGE\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.errorCode == "bad_request")
        #expect(client.isClosedByPeer())
        let tooNew = try daemon.connect()
        try tooNew.send("GET /v1/health HTTP/2.0\r\nHost: x\r\n\r\n")
        #expect(try tooNew.readResponse().status == 505)
        let badChunk = try daemon.connect()
        try badChunk.send("PUT /v1/stores/m/blobs/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
        #expect(try badChunk.readResponse(method: "PUT").status == 400)
        #expect(try daemon.connect().request("GET", "/v1/health").status == 200)
        #expect(try daemon.connect().request("GET", "/v1/stores/m/blobs/x").status == 404)
    }

    @Test func routingErrors() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let unknown = try client.request("GET", "/v2/whatever")
        #expect(unknown.status == 404)
        let method = try client.request("POST", "/v1/stores/s/blobs/x", body: [1])
        #expect(method.status == 405)
        #expect(method.errorCode == "method_not_allowed")
        #expect(method.header("Allow") == "GET, HEAD, PUT, DELETE")
        let badStore = try client.request("GET", "/v1/stores/Bad/blobs/x")
        #expect(badStore.errorCode == "invalid_store_name")
        #expect(try client.request("GET", "/v1/health").status == 200)
    }

    @Test func validationFailuresStoreNothing() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let image = try client.request("PUT", "/v1/stores/v/blobs/i", headers: ["Blob-Validate": "image"], body: Array("not an image".utf8))
        #expect(image.status == 415)
        #expect(image.errorCode == "not_an_image")
        let record = try client.request("PUT", "/v1/stores/v/blobs/r", headers: ["Blob-Validate": "record"], body: Array("{oops".utf8))
        #expect(record.status == 422)
        #expect(record.errorCode == "invalid_record")
        let good = try client.request("PUT", "/v1/stores/v/blobs/r", headers: ["Blob-Validate": "record"], body: Array(#"{"a":1}"#.utf8))
        #expect(good.status == 201)
        #expect(try client.request("GET", "/v1/stores/v/blobs/i").status == 404)
    }

    @Test func curlCanTalkToTheDaemon() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else {
            print("skipping curl test: /usr/bin/curl is not installed")
            return
        }
        let daemon = try DaemonProcess()
        func curl(_ arguments: [String]) throws -> String {
            try runProgram("/usr/bin/curl", ["-s", "--unix-socket", daemon.socketPath] + arguments).outputText
        }
        let file = daemon.folder.path + "/upload.txt"
        try "from curl".write(toFile: file, atomically: true, encoding: .utf8)
        let put = try curl(["-X", "PUT", "-T", file, "-w", "%{http_code}", "-o", "/dev/null", "http://blobd/v1/stores/curl/blobs/f.txt"])
        #expect(put == "201")
        #expect(try curl(["http://blobd/v1/stores/curl/blobs/f.txt"]) == "from curl")
    }
}
