import Foundation
import Testing

/// Malformed request lines and header sections, floods, and control bytes: each gets the codec's
/// status with error code `bad_request` and a closed connection (PROTOCOL.md, "HTTP basics").
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct HostileHeadTests {
    static let requestLineCases: [HostileCase] = [
        .malformed("method only", "GET\r\n\r\n"),
        .malformed("no version", "GET /v1/health\r\n\r\n"),
        .malformed("no method", "/v1/health HTTP/1.1\r\n\r\n"),
        .malformed("leading space", " GET /v1/health HTTP/1.1\r\n\r\n"),
        .malformed("two spaces after method", "GET  /v1/health HTTP/1.1\r\n\r\n"),
        .malformed("two spaces before version", "GET /v1/health  HTTP/1.1\r\n\r\n"),
        .malformed("trailing space", "GET /v1/health HTTP/1.1 \r\n\r\n"),
        .malformed("tab separators", "GET\t/v1/health\tHTTP/1.1\r\n\r\n"),
        .malformed("four words", "GET /v1/health HTTP/1.1 extra\r\n\r\n"),
        .malformed("only spaces", "   \r\n\r\n"),
        .malformed("40 KiB of empty lines", String(repeating: "\r\n", count: 20 * 1024), status: 431),
        .malformed("CR CR LF before request", "\r\r\nGET /v1/health HTTP/1.1\r\n\r\n"),
        .halfClosed("empty lines, then end of stream", "\r\n\r\n"),
        .halfClosed("half a request line, then end of stream", "GET /v1/hea"),
        .halfClosed("a head without its blank line, then end of stream", "GET /v1/health HTTP/1.1\r\nHost: blobd\r\n"),
        // RFC 9112 §2.2: empty lines before a request line are ignored.
        HostileCase("empty lines before a request", "\r\n\r\n" + Hostile.get("/v1/health"), [.ok()], .open),
        .malformed("method with @", "G@T /v1/health HTTP/1.1\r\n\r\n"),
        .malformed("method with NUL", bytes: Array("G".utf8) + [0] + Array("ET /v1/health HTTP/1.1\r\n\r\n".utf8)),
        .malformed("method with non-ASCII", bytes: [0xC3, 0x89] + Array("T /v1/health HTTP/1.1\r\n\r\n".utf8)),
        .malformed("version HTTP/2.0", Hostile.request("GET /v1/health HTTP/2.0"), status: 505),
        .malformed("version HTTP/1.2", Hostile.request("GET /v1/health HTTP/1.2"), status: 505),
        .malformed("version HTTP/0.9", Hostile.request("GET /v1/health HTTP/0.9"), status: 505),
        .malformed("version HTTP/3.0", Hostile.request("GET /v1/health HTTP/3.0"), status: 505),
        .malformed("version HTTP/9.9", Hostile.request("GET /v1/health HTTP/9.9"), status: 505),
        .malformed("HTTP/2 connection preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 505),
        .malformed("version HTTP/1", Hostile.request("GET /v1/health HTTP/1")),
        .malformed("version lowercase", Hostile.request("GET /v1/health http/1.1")),
        .malformed("version HTTP/1.1.1", Hostile.request("GET /v1/health HTTP/1.1.1")),
        .malformed("version HTTP/11", Hostile.request("GET /v1/health HTTP/11")),
        .malformed("version HTTP/1.10", Hostile.request("GET /v1/health HTTP/1.10")),
        .malformed("version HTX/1.1", Hostile.request("GET /v1/health HTX/1.1")),
        .malformed("version HTTP/a.b", Hostile.request("GET /v1/health HTTP/a.b")),
        .malformed("garbage line with CRLF", "\u{1}\u{2}\u{3}garbage\u{7f}\r\n\r\n"),
        .malformed("binary garbage", bytes: (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) } + Array("\r\n\r\n".utf8)),
        .malformed("TLS client hello", bytes: [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + Array("\r\n\r\n".utf8)),
        .malformed("NUL in target", bytes: Array("GET /v1/he".utf8) + [0] + Array("alth HTTP/1.1\r\n\r\n".utf8)),
        .malformed("control byte in target", bytes: Array("GET /v1/stores/s/blobs/a".utf8) + [1] + Array(" HTTP/1.1\r\n\r\n".utf8)),
        .malformed("DEL in target", bytes: Array("GET /v1/stores/s/blobs/a".utf8) + [0x7F] + Array(" HTTP/1.1\r\n\r\n".utf8)),
        .malformed("raw UTF-8 in target", bytes: Array("GET /v1/stores/s/blobs/caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\n\r\n".utf8)),
        .malformed("raw 0xFF in target", bytes: Array("GET /v1/stores/s/blobs/".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1\r\n\r\n".utf8)),
        .malformed("fragment in target", Hostile.get("/v1/health#frag")),
        .malformed("bare LF line endings", "GET /v1/health HTTP/1.1\nHost: blobd\n\n"),
        .malformed("bare CR after request line", "GET /v1/health HTTP/1.1\r\rHost: blobd\r\n\r\n"),
        .malformed("URL over 8 KiB", Hostile.get("/v1/stores/s/blobs/" + String(repeating: "a", count: 8 * 1024 + 10)), status: 414),
        .malformed("URL of 60 KiB", Hostile.get("/" + String(repeating: "x", count: 60 * 1024)), status: 414),
        // Bad percent-encoding is refused by the router, not the codec: the framing is intact, so the connection stays.
        HostileCase("bad percent escape in path", Hostile.get("/v1/stores/s/blobs/%zz"), [.badRequest], .open),
        HostileCase("truncated percent escape", Hostile.get("/v1/stores/s/blobs/abc%4"), [.badRequest], .open),
        HostileCase("lone percent", Hostile.get("/v1/stores/s/blobs/%"), [.badRequest], .open),
        HostileCase("encoded NUL in path", Hostile.get("/v1/stores/s/blobs/a%00b"), [.error(400, "invalid_identifier")], .open),
        HostileCase("encoded NUL outside a name", Hostile.get("/v1/health%00"), [.badRequest], .open),
        // Well-formed but unusual: answered, and the connection stays open.
        HostileCase("lowercase method", Hostile.request("get /v1/health HTTP/1.1"), [.error(405, "method_not_allowed", allow: "GET, HEAD")], .open),
        HostileCase("mixed-case method", Hostile.request("Get /v1/health HTTP/1.1"), [.error(405, "method_not_allowed", allow: "GET, HEAD")], .open),
        HostileCase("unknown method", Hostile.request("BREW /v1/stores/s/blobs/pot HTTP/1.1"), [.error(405, "method_not_allowed", allow: "GET, HEAD, PUT, DELETE")], .open),
        HostileCase("unknown method, unknown path", Hostile.request("BREW /coffee HTTP/1.1"), [.error(404, "not_found")], .open),
        HostileCase("asterisk target", Hostile.request("OPTIONS * HTTP/1.1"), [.error(404, "not_found")], .open),
        HostileCase("absolute-form target", Hostile.request("GET http://blobd/v1/health HTTP/1.1"), [.ok()], .open),
        HostileCase("relative target", Hostile.request("GET v1/health HTTP/1.1"), [.error(404, "not_found")], .open),
        HostileCase("URL just under 8 KiB", Hostile.get("/" + String(repeating: "y", count: 8 * 1024 - 40)), [.error(404, "not_found")], .open),
        HostileCase("HTTP/1.0 without keep-alive", Hostile.request("GET /v1/health HTTP/1.0", []), [.ok()], .closed),
        HostileCase("encoded control byte in unknown path", Hostile.get("/v1/he%01alth"), [.error(404, "not_found")], .open),
    ]

    static var headerCases: [HostileCase] {
        let health = "GET /v1/health HTTP/1.1\r\n"
        var cases: [HostileCase] = [
            .malformed("header without colon", health + "Host blobd\r\n\r\n"),
            .malformed("space before colon", health + "Host : blobd\r\n\r\n"),
            .malformed("tab before colon", health + "Host\t: blobd\r\n\r\n"),
            .malformed("obs-fold with space", health + "Host: blobd\r\nX-Long: one\r\n two\r\n\r\n"),
            .malformed("obs-fold with tab", health + "Host: blobd\r\nX-Long: one\r\n\ttwo\r\n\r\n"),
            .malformed("whitespace before first field", health + " Host: blobd\r\n\r\n"),
            .malformed("bare LF after a field", health + "Host: blobd\nX-A: 1\r\n\r\n"),
            .malformed("bare LF ending the head", health + "Host: blobd\r\n\n"),
            .malformed("bare CR in a value", health + "Host: blo\rbd\r\n\r\n"),
            .malformed("bare CR ending a field", health + "Host: blobd\rX-A: 1\r\n\r\n"),
            .malformed("empty field name", health + ": value\r\n\r\n"),
            .malformed("field name with parenthesis", health + "X(y): 1\r\n\r\n"),
            .malformed("field name with space", health + "X Y: 1\r\n\r\n"),
            .malformed("field name with slash", health + "X/Y: 1\r\n\r\n"),
            .malformed("non-ASCII field name", bytes: Array(health.utf8) + [0xC3, 0x9C] + Array("ber: 1\r\n\r\n".utf8)),
            .malformed("NUL in a value", bytes: Array((health + "X-A: a").utf8) + [0] + Array("b\r\n\r\n".utf8)),
            .malformed("control byte in a value", bytes: Array((health + "X-A: a").utf8) + [0x01] + Array("b\r\n\r\n".utf8)),
            .malformed("escape byte in a value", bytes: Array((health + "X-A: a").utf8) + [0x1B] + Array("[31mb\r\n\r\n".utf8)),
            .malformed("NUL in a field name", bytes: Array((health + "X-").utf8) + [0] + Array("A: 1\r\n\r\n".utf8)),
            .malformed("duplicate Host", health + "Host: a\r\nHost: b\r\n\r\n"),
            .malformed("101 header fields", health + (0..<101).map { "X-H\($0): v\r\n" }.joined() + "\r\n", status: 431),
            .malformed("1000 header fields", health + (0..<1000).map { "X-H\($0): v\r\n" }.joined() + "\r\n", status: 431),
            .malformed("33 KiB head in one field", health + "X-Big: " + String(repeating: "b", count: 33 * 1024) + "\r\n\r\n", status: 431),
            .malformed("33 KiB head in 60 fields", health + (0..<60).map { "X-H\($0): " + String(repeating: "c", count: 560) + "\r\n" }.joined() + "\r\n", status: 431),
            .malformed("63 KiB head", health + "X-Big: " + String(repeating: "d", count: 63 * 1024) + "\r\n\r\n", status: 431),
            .malformed("head without end, past 64 KiB", health + "X-Big: " + String(repeating: "e", count: 70 * 1024), status: 431),
            HostileCase("100 header fields", health + (0..<100).map { "X-H\($0): v\r\n" }.joined() + "\r\n", [.ok()], .open),
            HostileCase("31 KiB head", health + "X-Big: " + String(repeating: "f", count: 31 * 1024) + "\r\n\r\n", [.ok()], .open),
            HostileCase("tab in a value", health + "X-A: a\tb\r\n\r\n", [.ok()], .open),
            HostileCase("obs-text in a value", Array((health + "X-A: a").utf8) + [0xFF, 0xFE] + Array("b\r\n\r\n".utf8), [.ok()], .open),
            HostileCase("empty value", health + "X-Empty:\r\n\r\n", [.ok()], .open),
            HostileCase("no Host at all", health + "\r\n", [.ok()], .open),
            HostileCase("Connection: close", health + "Connection: close\r\n\r\n", [.ok()], .closed),
        ]
        cases.append(HostileCase("Last-Event-ID not a number", Hostile.get("/v1/events", ["Last-Event-ID: abc"]), [.badRequest], .open))
        cases.append(HostileCase("events for a bad store name", Hostile.get("/v1/events?store=..%2F.."), [.error(400, "invalid_store_name")], .open))
        return cases
    }

    @Test func malformedRequestLines() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        Hostile.run(Self.requestLineCases, on: daemon)
        Hostile.checkSurvived(daemon, group: "request lines")
    }

    @Test func malformedHeaderSections() throws {
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        Hostile.run(Self.headerCases, on: daemon)
        Hostile.checkSurvived(daemon, group: "header lines")
    }
}
