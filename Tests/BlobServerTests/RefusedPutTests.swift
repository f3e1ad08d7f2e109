import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "A refused PUT never creates the store": every way a first put to a new store can fail leaves no
/// store folder behind, and concurrent puts to the same new store keep it when one of them commits.
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct RefusedPutTests {
    static func head(_ store: String, _ fields: [String]) -> String {
        "PUT /v1/stores/\(store)/blobs/x HTTP/1.1\r\nHost: blobd\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Each refusal, sent to its own never-written store: (store, request bytes, status, code).
    static let refusals: [(store: String, bytes: [UInt8], status: Int, code: String)] = [
        ("not-image", Array((head("not-image", ["Content-Length: 5", "Blob-Validate: image"]) + "hello").utf8), 415, "not_an_image"),
        // Refused while the body still arrives (the image check runs on the first 256 KiB).
        ("not-image-large", Array(head("not-image-large", ["Content-Length: 1048576", "Blob-Validate: image"]).utf8) + [UInt8](repeating: 0x41, count: 1 << 20),
         415, "not_an_image"),
        ("bad-record", Array((head("bad-record", ["Content-Length: 9", "Blob-Validate: record"]) + "{not json").utf8), 422, "invalid_record"),
        ("if-match", Array((head("if-match", ["Content-Length: 5", "If-Match: \"0123456789abcdef\""]) + "hello").utf8), 412, "precondition_failed"),
        ("bad-chunk", Array((head("bad-chunk", ["Transfer-Encoding: chunked"]) + "zz\r\nhello\r\n0\r\n\r\n").utf8), 400, "bad_request"),
        ("huge-chunk", Array((head("huge-chunk", ["Transfer-Encoding: chunked"]) + "FFFFFFFFFFFFFFFFFFFF\r\nhello\r\n").utf8), 413, "bad_request"),
        ("too-large", Array((head("too-large", ["Content-Length: 99999999999999"]) + "hello").utf8), 413, "too_large"),
        ("bad-meta", Array((head("bad-meta", ["Content-Length: 5", "Blob-Meta-Bad.Key: v"]) + "hello").utf8), 400, "invalid_metadata"),
    ]

    static func storeFolderExists(_ daemon: DaemonProcess, _ store: String) -> Bool {
        FileManager.default.fileExists(atPath: daemon.root + "/" + store)
    }

    /// Waits (up to 10 s) until the store's folder is gone; the daemon removes it when it sees the request end.
    static func folderGoes(_ daemon: DaemonProcess, _ store: String) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while storeFolderExists(daemon, store) && Date() < deadline { usleep(20_000) }
        return !storeFolderExists(daemon, store)
    }

    @Test func everyRefusalLeavesNoStore() throws {
        let daemon = try DaemonProcess()
        for refusal in Self.refusals {
            let client = try WireClient(path: daemon.socketPath)
            client.send(refusal.bytes)
            let response = try client.readResponse(method: "PUT")
            #expect(response.status == refusal.status, "[\(refusal.store)] \(response.text)")
            #expect(response.errorCode == refusal.code, "[\(refusal.store)] \(response.text)")
            #expect(!Self.storeFolderExists(daemon, refusal.store), "[\(refusal.store)] a refused PUT created the store folder")
            #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/\(refusal.store)/blobs")).status == 404, "[\(refusal.store)]")
            let stores = try Hostile.fetch(daemon, Hostile.get("/v1/stores"))
            let names = (stores.json?["stores"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(!names.contains(refusal.store), "[\(refusal.store)] listed after a refused PUT: \(names)")
        }
        // The same names work afterwards: the store is created by a put that commits.
        for refusal in Self.refusals {
            #expect(try Hostile.fetch(daemon, Hostile.put("/v1/stores/\(refusal.store)/blobs/ok", body: "fine")).status == 201, "[\(refusal.store)]")
            #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/\(refusal.store)/blobs/ok")).text == "fine")
        }
    }

    @Test func aClientVanishingMidBodyLeavesNoStore() throws {
        let daemon = try DaemonProcess()
        do {
            let client = try WireClient(path: daemon.socketPath)
            client.send(Self.head("vanished", ["Content-Length: 1000"]) + "only part")
            // Once the daemon has the head it has created the store for the upload.
            #expect(try Hostile.fetch(daemon, Hostile.get("/v1/health")).status == 200)
        }
        #expect(Self.folderGoes(daemon, "vanished"), "the store of an abandoned first put was left behind")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/vanished/blobs")).status == 404)
    }

    /// One put to a new store fails while another is in progress or already committed: the store stays.
    @Test func aFailedPutDoesNotRemoveAStoreAnotherPutCommitsTo() throws {
        let daemon = try DaemonProcess()
        // A fails after B committed.
        let a = try WireClient(path: daemon.socketPath)
        a.send(Self.head("shared", ["Content-Length: 5", "Blob-Validate: record"]) + "{bad")
        #expect(try Hostile.fetch(daemon, Hostile.put("/v1/stores/shared/blobs/b", body: "kept")).status == 201)
        a.send("!")
        #expect(try a.readResponse(method: "PUT").status == 422)
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/shared/blobs/b")).text == "kept")

        // D fails while C (the first put) is still sending: C commits afterwards and the store is kept.
        let c = try WireClient(path: daemon.socketPath)
        c.send(Self.head("second", ["Content-Length: 5"]) + "hell")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/health")).status == 200)
        // Until a put commits, the store does not exist for reads and listings.
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/second/blobs")).status == 404)
        let listed = try Hostile.fetch(daemon, Hostile.get("/v1/stores"))
        #expect(!(listed.json?["stores"] as? [[String: Any]] ?? []).contains { $0["name"] as? String == "second" })
        let refused = try Hostile.fetch(daemon, Hostile.put("/v1/stores/second/blobs/d", body: "hello", ["Blob-Validate: image"]))
        #expect(refused.status == 415)
        #expect(Self.storeFolderExists(daemon, "second"), "a failed put removed a store another put is writing to")
        c.send("o")
        #expect(try c.readResponse(method: "PUT").status == 201)
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/second/blobs/x")).text == "hello")
        let list = try Hostile.fetch(daemon, Hostile.get("/v1/stores/second/blobs"))
        #expect((list.json?["items"] as? [[String: Any]])?.count == 1)
    }
}
