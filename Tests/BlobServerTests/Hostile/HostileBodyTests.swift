import Foundation
import Testing

/// Request-body framing abuse: bad `Content-Length`, ambiguous or unsupported transfer codings,
/// bad chunked encodings, and bodies on routes that take none.
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct HostileBodyTests {
    static func putHead(_ id: String, _ fields: [String]) -> String {
        "PUT /v1/stores/frame/blobs/\(id) HTTP/1.1\r\nHost: blobd\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    static func chunked(_ id: String, _ body: String) -> String {
        putHead(id, ["Transfer-Encoding: chunked"]) + body
    }

    static let contentLengthCases: [HostileCase] = [
        .malformed("Content-Length not numeric", putHead("cl1", ["Content-Length: abc"]) + "abc"),
        .malformed("Content-Length negative", putHead("cl2", ["Content-Length: -1"]) + "x"),
        .malformed("Content-Length with plus sign", putHead("cl3", ["Content-Length: +5"]) + "hello"),
        .malformed("Content-Length fractional", putHead("cl4", ["Content-Length: 1.5"]) + "x"),
        .malformed("Content-Length hexadecimal", putHead("cl5", ["Content-Length: 0x10"]) + "x"),
        .malformed("Content-Length beyond Int64", putHead("cl6", ["Content-Length: 99999999999999999999999"]) + "x"),
        .malformed("Content-Length Int64.max + 1", putHead("cl7", ["Content-Length: 9223372036854775808"]) + "x"),
        .malformed("Content-Length empty", putHead("cl8", ["Content-Length:"]) + "x"),
        .malformed("Content-Length with inner space", putHead("cl9", ["Content-Length: 1 2"]) + "x"),
        .malformed("Content-Length list that disagrees", putHead("cl10", ["Content-Length: 5, 6"]) + "hello"),
        .malformed("two Content-Length fields that disagree", putHead("cl11", ["Content-Length: 5", "Content-Length: 6"]) + "hello"),
        .malformed("Content-Length and chunked", putHead("cl12", ["Content-Length: 5", "Transfer-Encoding: chunked"]) + "5\r\nhello\r\n0\r\n\r\n"),
        .malformed("chunked and Content-Length", putHead("cl13", ["Transfer-Encoding: chunked", "Content-Length: 5"]) + "5\r\nhello\r\n0\r\n\r\n"),
        .malformed("Content-Length on GET that disagrees", "GET /v1/health HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx"),
        HostileCase("two Content-Length fields that agree", putHead("cl14", ["Content-Length: 5", "Content-Length: 5"]) + "hello", [.ok(201)], .open),
        HostileCase("Content-Length zero", putHead("cl15", ["Content-Length: 0"]), [.ok(201)], .open),
        HostileCase("Content-Length with leading zeros", putHead("cl16", ["Content-Length: 0005"]) + "hello", [.ok(201)], .open),
    ]

    static let transferCodingCases: [HostileCase] = [
        .malformed("gzip coding", putHead("te1", ["Transfer-Encoding: gzip"]) + "x", status: 501),
        .malformed("identity coding", putHead("te2", ["Transfer-Encoding: identity"]) + "x", status: 501),
        .malformed("gzip then chunked", putHead("te3", ["Transfer-Encoding: gzip, chunked"]) + "1\r\nx\r\n0\r\n\r\n", status: 501),
        .malformed("chunked then gzip", putHead("te4", ["Transfer-Encoding: chunked, gzip"]) + "1\r\nx\r\n0\r\n\r\n"),
        .malformed("chunked twice", putHead("te5", ["Transfer-Encoding: chunked, chunked"]) + "1\r\nx\r\n0\r\n\r\n"),
        .malformed("chunked in two fields", putHead("te6", ["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"]) + "1\r\nx\r\n0\r\n\r\n"),
        .malformed("empty Transfer-Encoding", putHead("te7", ["Transfer-Encoding:"]) + "x"),
        .malformed("chunked in HTTP/1.0", "PUT /v1/stores/frame/blobs/te8 HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"),
        HostileCase("chunked, capitalised", putHead("te9", ["Transfer-Encoding: Chunked"]) + "5\r\nhello\r\n0\r\n\r\n", [.ok(201)], .open),
    ]

    static let chunkCases: [HostileCase] = [
        .malformed("non-hex chunk size", chunked("ch1", "zz\r\nhello\r\n0\r\n\r\n")),
        .malformed("negative chunk size", chunked("ch2", "-5\r\nhello\r\n0\r\n\r\n")),
        .malformed("empty chunk size", chunked("ch3", "\r\nhello\r\n0\r\n\r\n")),
        .malformed("chunk size with 0x prefix", chunked("ch4", "0x5\r\nhello\r\n0\r\n\r\n")),
        .malformed("overflowing chunk size", chunked("ch5", "FFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n"), status: 413),
        .malformed("chunk size just past Int64", chunked("ch6", "8000000000000000\r\nhello\r\n0\r\n\r\n"), status: 413),
        .malformed("data longer than its size", chunked("ch7", "3\r\nhello\r\n0\r\n\r\n")),
        .malformed("missing CRLF after data", chunked("ch8", "5\r\nhelloXX0\r\n\r\n")),
        .malformed("LF only after data", chunked("ch9", "5\r\nhello\n0\r\n\r\n")),
        .malformed("bare LF after chunk size", chunked("ch10", "5\nhello\r\n0\r\n\r\n")),
        .malformed("huge chunk-size line", chunked("ch11", "5;" + String(repeating: "e", count: 20_000) + "\r\nhello\r\n0\r\n\r\n")),
        .malformed("huge chunk-size line without end", chunked("ch12", "5;" + String(repeating: "e", count: 60_000))),
        .malformed("control byte in extension", chunked("ch13", "5;a=\u{1}\r\nhello\r\n0\r\n\r\n")),
        .malformed("garbage after chunk size", chunked("ch14", "5 x\r\nhello\r\n0\r\n\r\n")),
        .malformed("trailer starting with whitespace", chunked("ch15", "5\r\nhello\r\n0\r\n x: y\r\n\r\n")),
        .malformed("trailer with control byte", chunked("ch16", "5\r\nhello\r\n0\r\nX-T: a\u{1}b\r\n\r\n")),
        .malformed("trailers over the limit", chunked("ch17", "5\r\nhello\r\n0\r\n" + (0..<200).map { "X-T\($0): " + String(repeating: "t", count: 200) + "\r\n" }.joined() + "\r\n"), status: 431),
        HostileCase("chunk extension", chunked("ch18", "5;name=value\r\nhello\r\n0\r\n\r\n"), [.ok(201)], .open),
        HostileCase("trailer fields", chunked("ch19", "5\r\nhello\r\n0\r\nX-Trailer: yes\r\n\r\n"), [.ok(201)], .open),
        HostileCase("many 1-byte chunks", chunked("ch20", String(repeating: "1\r\nz\r\n", count: 2000) + "0\r\n\r\n"), [.ok(201)], .open),
        HostileCase("upper-case hex size", chunked("ch21", "A\r\n0123456789\r\n0\r\n\r\n"), [.ok(201)], .open),
        HostileCase("leading zeros in size", chunked("ch22", "0000005\r\nhello\r\n0\r\n\r\n"), [.ok(201)], .open),
    ]

    /// Bodies where none is taken: read and discarded (connection kept), or answered and closed.
    static let bodyOnWrongRouteCases: [HostileCase] = [
        HostileCase("GET with a body", "GET /v1/health HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", [.ok()], .open),
        HostileCase("GET with a chunked body", "GET /v1/health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", [.ok()], .open),
        HostileCase("405 with a body", "POST /v1/health HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", [.error(405, "method_not_allowed", allow: "GET, HEAD")], .open),
        HostileCase("bad store name with a body", "PUT /v1/stores/BAD/blobs/x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", [.error(400, "invalid_store_name")], .open),
        HostileCase("DELETE with a body", "DELETE /v1/stores/frame/blobs/nothing HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", [.error(404, "not_found")], .closed),
        HostileCase("events with a body", "GET /v1/events HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", [.badRequest], .closed),
        HostileCase("list with a body", "GET /v1/stores/frame/blobs HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", [.ok()], .closed),
    ]

    @Test func contentLengthAndTransferCodings() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        Hostile.run(Self.contentLengthCases + Self.transferCodingCases, on: daemon)
        // Refused framings stored nothing.
        for id in ["cl1", "cl2", "cl6", "cl10", "cl11", "cl12", "cl13", "te1", "te3", "te4", "te5", "te8"] {
            #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/frame/blobs/\(id)")).status == 404, "\(id) was stored")
        }
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/frame/blobs/te9")).text == "hello")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/frame/blobs/cl16")).text == "hello")
        Hostile.checkSurvived(daemon, group: "content length and transfer codings")
    }

    @Test func badChunkedBodies() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        Hostile.run(Self.chunkCases, on: daemon)
        for index in 1...17 {
            #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/frame/blobs/ch\(index)")).status == 404, "ch\(index) was stored")
        }
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/frame/blobs/ch20")).body == Array(repeating: UInt8(ascii: "z"), count: 2000))
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/frame/blobs/ch21")).text == "0123456789")
        Hostile.checkSurvived(daemon, group: "chunked bodies")
    }

    @Test func bodiesOnRoutesThatTakeNone() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        #expect(try Hostile.fetch(daemon, Hostile.put("/v1/stores/frame/blobs/seed", body: "seed")).status == 201)
        Hostile.run(Self.bodyOnWrongRouteCases, on: daemon)
        Hostile.checkSurvived(daemon, group: "bodies on routes that take none")
    }
}
