import BlobStore
import Foundation
import Testing

@testable import BlobClient

@Suite struct EventStreamParserTests {
    @Test func parsesEventsSplitAcrossFeedsWithComments() {
        let text = ": heartbeat\r\nid: 7\nevent: put\ndata: {\"a\":1}\n\n:ping\n\nid: 8\r\nevent: removed\r\ndata: line1\r\ndata: line2\r\n\r\n"
        let bytes = Array(text.utf8)
        // Every split point, including between CR and LF.
        for split in 0...bytes.count {
            var parser = EventStreamParser()
            let events = parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
            #expect(events == [
                ServerSentEvent(id: "7", event: "put", data: "{\"a\":1}"),
                ServerSentEvent(id: "8", event: "removed", data: "line1\nline2"),
            ], "split at \(split)")
            #expect(parser.lastEventID == "8")
        }
    }

    @Test func byteByByteAndDefaults() {
        var parser = EventStreamParser()
        var events: [ServerSentEvent] = []
        for byte in "data:x\n\nevent: gap\n\n".utf8 { events += parser.feed([byte]) }
        #expect(events == [ServerSentEvent(id: nil, event: "message", data: "x")])  // No data: no event.
    }

    @Test func decodesChangeEvents() throws {
        let put = ServerSentEvent(
            id: "3", event: "put",
            data: #"{"store":"s","blob":{"identifier":"a","size":1,"contentType":"text/plain","etag":"0123456789abcdef","created":"2026-11-22T22:28:28.076Z","modified":"2026-11-22T22:28:28.5Z","metadata":{}},"date":"2026-11-22T22:28:28.500Z"}"#)
        guard case .change(let change)? = try ChangeDecoding.watchEvent(put), case .put(let metadata) = change.kind else {
            Issue.record("not a put")
            return
        }
        #expect(change.sequence == 3 && change.store == "s" && metadata.identifier == "a")
        let gap = ServerSentEvent(id: nil, event: "gap", data: #"{"lastEventId":4,"firstAvailableId":9}"#)
        #expect(try ChangeDecoding.watchEvent(gap) == .gap(lastEventID: 4, firstAvailableID: 9))
        let removed = ServerSentEvent(id: "5", event: "removed", data: #"{"store":"s","identifier":"x/y","date":"2026-11-22T22:28:28Z"}"#)
        guard case .change(let r)? = try ChangeDecoding.watchEvent(removed) else { Issue.record("no change"); return }
        #expect(r.kind == .removed(identifier: "x/y"))
    }
}

@Suite struct WireDecodingTests {
    @Test func decodesMetadataObject() throws {
        let json = #"{"identifier":"2024/cat.jpg","size":48213,"contentType":"image/jpeg","etag":"9f3c0e5d1a2b4c6d","created":"2026-11-22T22:28:28.076Z","modified":"2026-11-22T22:30:01.512Z","metadata":{"author":"ada"},"image":{"format":"jpeg","width":640,"height":480}}"#
        let metadata = try WireDecoding.metadata(from: Array(json.utf8))
        #expect(metadata.identifier == "2024/cat.jpg")
        #expect(metadata.size == 48213)
        #expect(metadata.etag.rawValue == "9f3c0e5d1a2b4c6d")
        #expect(metadata.userMetadata == ["author": "ada"])
        #expect(metadata.image == ImageInfo(format: .jpeg, width: 640, height: 480))
        #expect(abs(metadata.created.timeIntervalSince1970 - 1_795_386_508.076) < 0.0005)
        #expect(abs(metadata.modified.timeIntervalSince1970 - 1_795_386_601.512) < 0.0005)
    }

    @Test func failuresAreProtocolErrors() {
        #expect(throws: BlobClientError.self) { try WireDecoding.metadata(from: Array("{}".utf8)) }
    }
}

@Suite struct ErrorMappingTests {
    func body(_ code: String, _ message: String) -> [UInt8] {
        Array(#"{"error":{"code":"\#(code)","message":"\#(message)"}}"#.utf8)
    }

    @Test func mapsStoreCodes() {
        let context = ErrorMapping.Context(store: "s", identifier: "a", condition: .ifMatch(ETag(checksum: 1)))
        #expect(ErrorMapping.error(status: 404, headers: nil, body: body("not_found", "x"), context: context) as? BlobStoreError
            == .notFound(store: "s", identifier: "a"))
        #expect(ErrorMapping.error(status: 412, headers: ["ETag": "\"00000000000000ff\""], body: body("precondition_failed", "x"), context: context)
            as? BlobStoreError == .preconditionFailed(store: "s", identifier: "a", expected: ETag(checksum: 1), actual: ETag(checksum: 255)))
        // Without an ETag header the blob is absent.
        #expect(ErrorMapping.error(status: 412, headers: nil, body: body("precondition_failed", "x"), context: context)
            as? BlobStoreError == .preconditionFailed(store: "s", identifier: "a", expected: ETag(checksum: 1), actual: nil))
        #expect(ErrorMapping.error(status: 415, headers: nil, body: body("not_an_image", "blob 'a' for store 's' is not a recognised image: no signature"), context: context)
            as? BlobStoreError == .notAnImage(store: "s", identifier: "a", reason: "no signature"))
        #expect(ErrorMapping.error(status: 422, headers: nil, body: body("invalid_record", "r"), context: context) as? BlobStoreError
            == .invalidRecord(store: "s", identifier: "a", reason: "r"))
        #expect(ErrorMapping.error(status: 416, headers: ["Content-Range": "bytes */10"], body: body("range_not_satisfiable", "r"), context: context)
            as? BlobStoreError == .rangeNotSatisfiable(store: "s", identifier: "a", size: 10))
        #expect(ErrorMapping.error(status: 413, headers: nil, body: body("too_large", "blob 'a1' is too large: 2048 bytes exceeds the limit of 1024 bytes"), context: context)
            as? BlobStoreError == .tooLarge(what: "blob 'a' for store 's'", limit: 1024, actual: 2048))
        #expect(ErrorMapping.error(status: 400, headers: nil, body: body("invalid_query", "q"), context: context) as? BlobStoreError
            == .invalidQuery(store: "s", reason: "q"))
        #expect(ErrorMapping.error(status: 400, headers: nil, body: body("invalid_metadata", "m"), context: context) as? BlobStoreError
            == .invalidMetadata(store: "s", identifier: "a", reason: "m"))
    }

    @Test func otherCodesBecomeHTTPErrors() {
        let error = ErrorMapping.error(status: 403, headers: nil, body: body("forbidden", "no"), context: .init(store: "s", identifier: "a"))
        guard case .http(403, "forbidden", let message)? = error as? BlobClientError else { Issue.record("\(error)"); return }
        #expect(message.contains("'a'") && message.contains("'s'"))
        let raw = ErrorMapping.error(status: 502, headers: nil, body: Array("oops".utf8), context: .init())
        #expect(raw as? BlobClientError == .http(status: 502, code: "http_502", message: "oops"))
    }
}
