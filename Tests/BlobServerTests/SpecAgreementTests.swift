import BlobStore
import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Places where the daemon and docs/PROTOCOL.md once disagreed (or the spec and RFC 9110 did): each
/// test pins the behaviour the spec now states.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct SpecAgreementTests {
    private func identifiers(_ response: RawResponse) -> [String] {
        ((response.json?["items"] as? [[String: Any]]) ?? []).compactMap { $0["identifier"] as? String }
    }

    @Test func plusInAQueryValueIsAPlus() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/q/blobs/a+b", headers: ["Content-Type": "image/svg+xml"], body: [1]).status == 201)
        #expect(try client.request("PUT", "/v1/stores/q/blobs/a%20b", headers: ["Content-Type": "image/svg xml"], body: [2]).status == 201)
        #expect(identifiers(try client.request("GET", "/v1/stores/q/blobs?prefix=a+b")) == ["a+b"])
        #expect(identifiers(try client.request("GET", "/v1/stores/q/blobs?type=image/svg+xml")) == ["a+b"])
        #expect(identifiers(try client.request("GET", "/v1/stores/q/blobs?prefix=a%2Bb")) == ["a+b"])
        #expect(identifiers(try client.request("GET", "/v1/stores/q/blobs?prefix=a%20b")) == ["a b"])
        // An empty value is no filter.
        #expect(identifiers(try client.request("GET", "/v1/stores/q/blobs?prefix=&type=")) == ["a b", "a+b"])
    }

    @Test func aTrailingSlashNamesTheEmptyIdentifierNotTheCollection() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/e/blobs/keep", body: [1]).status == 201)
        for method in ["DELETE", "GET", "HEAD", "PUT"] {
            let response = try client.request(method, "/v1/stores/e/blobs/", body: method == "PUT" ? [2] : nil)
            #expect(response.status == 400, "\(method)")
            if method != "HEAD" { #expect(response.errorCode == "invalid_identifier", "\(method)") }
        }
        #expect(try client.request("GET", "/v1/stores/e/blobs/keep").status == 200)
    }

    @Test func recordValidationIsStrictJSON() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        for body in ["[1,]", #"{"a":1,}"#, "\u{FEFF}{}", #""\ud800""#, "01", "{'a':1}", "[1] [2]", "NaN"] {
            let response = try client.request("PUT", "/v1/stores/r/blobs/x", headers: ["Blob-Validate": "record"], body: Array(body.utf8))
            #expect(response.status == 422, "\(body)")
            #expect(response.errorCode == "invalid_record", "\(body)")
        }
        #expect(try client.request("GET", "/v1/stores/r/blobs/x").status == 404)
        let scalar = try client.request("PUT", "/v1/stores/r/blobs/s", headers: ["Blob-Validate": "record"], body: Array(#" "text" "#.utf8))
        #expect(scalar.status == 201)
        #expect(scalar.json?["contentType"] as? String == "application/json")
        let duplicate = try client.request("PUT", "/v1/stores/r/blobs/d", headers: ["Blob-Validate": "record"], body: Array(#"{"a":1,"a":2}"#.utf8))
        #expect(duplicate.status == 201)
        let typed = try client.request(
            "PUT", "/v1/stores/r/blobs/t", headers: ["Blob-Validate": "record", "Content-Type": "application/vnd.x+json"], body: Array("[]".utf8))
        #expect(typed.json?["contentType"] as? String == "application/vnd.x+json")
    }

    @Test func notModifiedCarriesETagAndDateOnly() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let put = try client.request(
            "PUT", "/v1/stores/n/blobs/x", headers: ["Content-Type": "text/plain", "Blob-Meta-A": "1"], body: Array("hi".utf8))
        let etag = try #require(put.header("ETag"))
        let response = try client.request("GET", "/v1/stores/n/blobs/x", headers: ["If-None-Match": etag])
        #expect(response.status == 304)
        #expect(Set(response.headers.map { $0.name.lowercased() }) == ["date", "etag"])
        #expect(response.header("ETag") == etag)
        let head = try client.request("HEAD", "/v1/stores/n/blobs/x", headers: ["If-None-Match": "W/\(etag)"])
        #expect(head.status == 304)
        #expect(Set(head.headers.map { $0.name.lowercased() }) == ["date", "etag"])
        #expect(try client.request("GET", "/v1/health").status == 200)
        #expect(client.pending.isEmpty)
    }

    @Test func encodedNULIsAnIdentifierOrStoreNameError() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        for method in ["GET", "PUT", "DELETE"] {
            let response = try client.request(method, "/v1/stores/z/blobs/ab%00c", body: method == "PUT" ? [1] : nil)
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_identifier", "\(method)")
            #expect(response.json.flatMap { ($0["error"] as? [String: Any])?["message"] as? String }?.contains("U+0000 at byte 2") == true)
        }
        #expect(try client.request("GET", "/v1/stores/z%00/blobs/x").errorCode == "invalid_store_name")
        #expect(try client.request("GET", "/v1/stores/z%00/blobs").errorCode == "invalid_store_name")
        // Elsewhere an encoded NUL is a malformed path, and so is any malformed escape.
        #expect(try client.request("GET", "/v1/health%00").errorCode == "bad_request")
        #expect(try client.request("GET", "/v1/stores/z/blobs/a%zz").errorCode == "bad_request")
        #expect(try client.request("GET", "/v1/stores/z/blobs/a%00b%zz").errorCode == "bad_request")
        #expect(try client.request("GET", "/v1/stores/z/blobs/%2500%00").errorCode == "invalid_identifier")
        #expect(try client.request("GET", "/v1/stores/z/blobs").status == 404)  // nothing was created
    }

    @Test func deleteConditions() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let tag = "\"0123456789abcdef\""
        // If-Match with no current version fails: in a store never written, and in one that exists.
        let noStore = try client.request("DELETE", "/v1/stores/d/blobs/x", headers: ["If-Match": tag])
        #expect(noStore.status == 412)
        #expect(noStore.errorCode == "precondition_failed")
        #expect(noStore.header("ETag") == nil)
        let put = try client.request("PUT", "/v1/stores/d/blobs/x", body: [1])
        let etag = try #require(put.header("ETag"))
        #expect(try client.request("DELETE", "/v1/stores/d/blobs/y", headers: ["If-Match": tag]).status == 412)
        // If-None-Match: * removes nothing that exists.
        let exists = try client.request("DELETE", "/v1/stores/d/blobs/x", headers: ["If-None-Match": "*"])
        #expect(exists.status == 412)
        #expect(exists.header("ETag") == etag)
        #expect(try client.request("GET", "/v1/stores/d/blobs/x").status == 200)
        #expect(try client.request("DELETE", "/v1/stores/d/blobs/y", headers: ["If-None-Match": "*"]).status == 404)
        #expect(try client.request("DELETE", "/v1/stores/d/blobs/x", headers: ["If-None-Match": etag]).errorCode == "bad_request")
        #expect(try client.request("DELETE", "/v1/stores/d/blobs/x", headers: ["If-Match": etag]).status == 204)
        #expect(try client.request("DELETE", "/v1/stores/d/blobs/x").status == 404)
    }

    @Test func headWorksWhereverGetWorks() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/h/blobs/x", body: [1, 2, 3]).status == 201)
        for target in ["/v1/stores", "/v1/stores/h/blobs", "/v1/stores/h/blobs?prefix=x", "/v1/stores/h/verify", "/v1/health"] {
            let get = try client.request("GET", target)
            let head = try client.request("HEAD", target)
            #expect(head.status == 200, "\(target)")
            #expect(head.header("Content-Length") == String(get.body.count), "\(target)")
            #expect(head.header("Content-Type") == get.header("Content-Type"), "\(target)")
        }
        let metrics = try client.request("HEAD", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(Int(metrics.header("Content-Length") ?? "") ?? 0 > 0)
        #expect(try client.request("HEAD", "/v1/stores/never/blobs").status == 404)
        // No HEAD sent a body: the next response on the connection reads cleanly.
        #expect(try client.request("GET", "/v1/health").text == #"{"status":"ok"}"#)
        #expect(client.pending.isEmpty)
        let post = try client.request("POST", "/v1/stores")
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD")
        #expect(try client.request("PUT", "/v1/stores/h/blobs").header("Allow") == "GET, HEAD, DELETE")
        #expect(try client.request("DELETE", "/metrics").header("Allow") == "GET, HEAD")

        // HEAD of the event stream: the stream's head, then the connection closes.
        let events = try daemon.connect()
        let head = try events.request("HEAD", "/v1/events?store=h")
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "text/event-stream")
        #expect(head.header("Cache-Control") == "no-cache")
        #expect(head.header("Connection") == "close")
        #expect(head.header("Content-Length") == nil)
        #expect(events.isClosedByPeer())
        #expect(events.pending.isEmpty)
        #expect(try daemon.connect().request("HEAD", "/v1/events?store=Bad").status == 400)
    }

    @Test func everyResponseHasADate() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        func check(_ response: RawResponse, _ what: String) {
            guard let value = response.header("Date"), let date = formatter.date(from: value) else {
                Issue.record("\(what): no IMF-fixdate Date header in \(response.headers)")
                return
            }
            #expect(abs(date.timeIntervalSinceNow) < 120, "\(what): \(value)")
            #expect(response.headers.filter { $0.name.lowercased() == "date" }.count == 1, "\(what)")
        }
        let put = try client.request("PUT", "/v1/stores/t/blobs/x", body: [1])
        check(put, "201")
        check(try client.request("GET", "/v1/stores/t/blobs/x"), "200")
        check(try client.request("HEAD", "/v1/stores/t/blobs/x"), "HEAD")
        check(try client.request("GET", "/v1/stores/t/blobs/x", headers: ["If-None-Match": put.header("ETag")!]), "304")
        check(try client.request("DELETE", "/v1/stores/t/blobs"), "204")
        check(try client.request("GET", "/v1/stores/t/blobs/x"), "404")
        check(try client.request("POST", "/v1/health"), "405")
        check(try client.request("GET", "/v1/stores"), "deferred 200")
        let malformed = try daemon.connect()
        try malformed.send("GET /x HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n")
        check(try malformed.readResponse(), "malformed 400")
        let events = try daemon.connect()
        try events.send("GET /v1/events HTTP/1.1\r\nHost: a\r\n\r\n")
        let head = try events.readUntil("\r\n\r\n")
        #expect(head.contains("\r\nDate: "), "event stream head: \(head)")
    }

    @Test func metadataKeysDifferingOnlyInCaseAreRefused() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let response = try client.request("PUT", "/v1/stores/m/blobs/x", headers: ["Blob-Meta-Author": "ada", "Blob-Meta-author": "bob"], body: [1])
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_metadata")
        let message = response.json.flatMap { ($0["error"] as? [String: Any])?["message"] as? String } ?? ""
        #expect(message.contains("'author'"), "\(message)")
        #expect(try client.request("GET", "/v1/stores/m/blobs").status == 404)  // nothing stored, no store made
    }

    @Test func metadataValuesAreUTF8() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let put = try client.request("PUT", "/v1/stores/u/blobs/x", headers: ["Blob-Meta-Name": "Zoë 日本"], body: [1])
        #expect(put.status == 201)
        #expect((put.json?["metadata"] as? [String: String])?["name"] == "Zoë 日本")
        #expect(try client.request("GET", "/v1/stores/u/blobs/x").header("Blob-Meta-name") == "Zoë 日本")
        try client.send(Array("PUT /v1/stores/u/blobs/y HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nBlob-Meta-Name: Zo".utf8) + [0xEB] + Array("\r\n\r\n1".utf8))
        let invalid = try client.readResponse()
        #expect(invalid.status == 400)
        #expect(invalid.errorCode == "invalid_metadata")
        #expect(try client.request("GET", "/v1/stores/u/blobs/y").status == 404)
    }

    @Test func removingEveryBlobKeepsTheStore() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/all/blobs/x", body: [1]).status == 201)
        #expect(try client.request("DELETE", "/v1/stores/all/blobs").status == 204)
        let stores = try client.request("GET", "/v1/stores").json?["stores"] as? [[String: Any]]
        #expect(stores?.first?["name"] as? String == "all")
        #expect(stores?.first?["count"] as? Int == 0)
        let list = try client.request("GET", "/v1/stores/all/blobs")
        #expect(list.status == 200)
        #expect(list.text == #"{"items":[],"nextCursor":null}"#)
        #expect(FileManager.default.fileExists(atPath: daemon.root + "/all"))
        #expect(try client.request("DELETE", "/v1/stores/never/blobs").status == 204)
        #expect(!FileManager.default.fileExists(atPath: daemon.root + "/never"))
    }

    @Test func emptyQueryValues() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/e/blobs/x", body: [1]).status == 201)
        #expect(identifiers(try client.request("GET", "/v1/stores/e/blobs?prefix=&type=&cursor=")) == ["x"])
        #expect(try client.request("GET", "/v1/stores/e/blobs?sort=").errorCode == "invalid_query")
        #expect(try client.request("GET", "/v1/stores/e/blobs?limit=").errorCode == "invalid_query")
        #expect(try client.request("GET", "/v1/stores/e/blobs?limit=0").errorCode == "invalid_query")
        #expect(try client.request("GET", "/v1/stores/e/blobs?prefix=%zz").errorCode == "invalid_query")
        #expect(identifiers(try client.request("GET", "/v1/stores/e/blobs?unknown=1&prefix")) == ["x"])
    }

    @Test func dotAndEmptySegmentsAreRefused() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s/blobs/keep", body: [0]).status == 201)
        let refused = ["a//b", "a/./b", "a/../b", "a/", "/a", ".", "..", "a/.", "a/..", "./a", "../a", "a/%2e%2E/b", "a/%2E", "a%2F%2Fb"]
        for id in refused {
            for method in ["PUT", "GET", "HEAD", "DELETE"] {
                let response = try client.request(method, "/v1/stores/s/blobs/\(id)", body: method == "PUT" ? [1] : nil)
                #expect(response.status == 400, "\(method) \(id)")
                if method != "HEAD" { #expect(response.errorCode == "invalid_identifier", "\(method) \(id)") }
            }
        }
        let message = try client.request("GET", "/v1/stores/s/blobs/a/../b").json.flatMap { ($0["error"] as? [String: Any])?["message"] as? String }
        #expect(message?.contains("'.' or '..' segment") == true, "\(message ?? "")")
        // Dots inside a segment are ordinary.
        for id in ["...", "a/.b", "a/b.", "..a/b..", ".hidden"] {
            #expect(try client.request("PUT", "/v1/stores/s/blobs/\(id)", body: [1]).status == 201, "\(id)")
        }
        let listed = try client.request("GET", "/v1/stores/s/blobs")
        #expect(identifiers(listed) == ["...", "..a/b..", ".hidden", "a/.b", "a/b.", "keep"])
    }

    @Test func blobsTheLibraryNamedWithDotSegmentsAreListedButNotAddressable() async throws {
        let folder = TempFolder()
        let root = folder.path + "/root"
        do {
            let store = try PersistentDataStore(name: "lib", root: URL(fileURLWithPath: root))
            try await store.put(Data([1]), identifier: "a//b")
            try await store.put(Data([2]), identifier: "../x")
        }
        let daemon = try DaemonProcess(folder: folder, root: root)
        let client = try daemon.connect()
        #expect(identifiers(try client.request("GET", "/v1/stores/lib/blobs")) == ["../x", "a//b"])
        #expect(try client.request("GET", "/v1/stores/lib/blobs/a//b").errorCode == "invalid_identifier")
        #expect(try client.request("DELETE", "/v1/stores/lib/blobs/..%2Fx").errorCode == "invalid_identifier")
        #expect(try client.request("DELETE", "/v1/stores/lib/blobs").status == 204)
        #expect(identifiers(try client.request("GET", "/v1/stores/lib/blobs")).isEmpty)
    }

    @Test func recordsAndContentTypesAtTheirLimits() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let bad = ["x/" + String(repeating: "y", count: 254), "text/plâin"]
        for type in bad {
            #expect(try client.request("PUT", "/v1/stores/l/blobs/x", headers: ["Content-Type": type], body: [1]).errorCode == "invalid_metadata")
        }
        #expect(try client.request("PUT", "/v1/stores/l/blobs/x", headers: ["Content-Type": "x/" + String(repeating: "y", count: 253)], body: [1]).status == 201)
        #expect(try client.request("DELETE", "/v1/stores/l/blobs/x", headers: ["If-Match": "*"]).errorCode == "bad_request")
        // A record over 64 MiB is refused whole, whatever it holds.
        let big = [UInt8](repeating: 0x20, count: 64 << 20) + Array("1".utf8)
        let record = try client.request("PUT", "/v1/stores/l/blobs/big", headers: ["Blob-Validate": "record"], body: big)
        #expect(record.status == 413)
        #expect(record.errorCode == "too_large")
        #expect(try client.request("GET", "/v1/stores/l/blobs/big").status == 404)
    }

    @Test func aSocketPathTooLongIsAUsageErrorAndCreatesNothing() throws {
        let folder = TempFolder()
        let root = folder.path + "/root"
        let socketFolder = folder.path + "/" + String(repeating: "s", count: 100)
        let process = Process()
        process.executableURL = BlobdBinary.url!
        process.arguments = ["--root", root, "--socket", socketFolder + "/blobd.sock"]
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 64)
        #expect(message.split(separator: "\n").count == 1, "\(message)")
        #expect(message.contains("at most 107"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: root))
        #expect(!FileManager.default.fileExists(atPath: socketFolder))

        // The default path too (from XDG_RUNTIME_DIR).
        let byDefault = Process()
        byDefault.executableURL = BlobdBinary.url!
        byDefault.arguments = ["--root", root]
        byDefault.environment = ["XDG_RUNTIME_DIR": socketFolder, "PATH": "/usr/bin:/bin"]
        byDefault.standardError = FileHandle.nullDevice
        try byDefault.run()
        byDefault.waitUntilExit()
        #expect(byDefault.terminationStatus == 64)
        #expect(!FileManager.default.fileExists(atPath: root))
        #expect(!FileManager.default.fileExists(atPath: socketFolder))
    }
}
