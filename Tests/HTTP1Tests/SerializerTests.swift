import Testing

@testable import HTTP1

@Suite("Serializers")
struct SerializerTests {
    @Test("response head bytes")
    func responseBytes() {
        var headers = HTTPHeaders()
        headers.append(.contentLength, value: 4096)
        headers.append(.contentType, value: "application/octet-stream")
        headers.append(name: "X-Custom", value: "v")
        var buffer: [UInt8] = []
        HTTPResponseHead(status: .ok, headers: headers).serialize(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self)
            == "HTTP/1.1 200 OK\r\nContent-Length: 4096\r\nContent-Type: application/octet-stream\r\nX-Custom: v\r\n\r\n")
    }

    @Test("status lines: standard, custom, unknown, HTTP/1.0")
    func statusLines() {
        func line(_ status: HTTPStatus, _ version: HTTPVersion = .http1_1, _ phrase: String? = nil) -> String {
            var buffer: [UInt8] = []
            HTTPSerializer.appendStatusLine(status, version: version, reasonPhrase: phrase, into: &buffer)
            return String(decoding: buffer, as: UTF8.self)
        }
        #expect(line(.notFound) == "HTTP/1.1 404 Not Found\r\n")
        #expect(line(.requestHeaderFieldsTooLarge) == "HTTP/1.1 431 Request Header Fields Too Large\r\n")
        #expect(line(.ok, .http1_0) == "HTTP/1.0 200 OK\r\n")
        #expect(line(.ok, .http1_1, "Fine") == "HTTP/1.1 200 Fine\r\n")
        #expect(line(299) == "HTTP/1.1 299 \r\n")
        #expect(line(.ok, .http1_1, "Bad\r\nX-Injected: 1") == "HTTP/1.1 200 Bad  X-Injected: 1\r\n")
    }

    @Test("building blocks write straight into a reused buffer")
    func buildingBlocks() {
        var buffer = bytes("previous")
        buffer.removeAll(keepingCapacity: true)
        HTTPSerializer.appendStatusLine(.partialContent, into: &buffer)
        HTTPSerializer.appendHeader(.contentLength, 0, into: &buffer)
        HTTPSerializer.appendHeader(.contentRange, "bytes 0-0/1", into: &buffer)
        HTTPSerializer.appendHeader(.etag, Int64.max, into: &buffer)
        HTTPSerializer.appendHeader(name: "X-A", value: "  trimmed\t", into: &buffer)
        HTTPSerializer.appendEndOfHead(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self)
            == "HTTP/1.1 206 Partial Content\r\nContent-Length: 0\r\nContent-Range: bytes 0-0/1\r\nETag: 9223372036854775807\r\nX-A: trimmed\r\n\r\n")
    }

    @Test("decimal formatting", arguments: [0, 1, 9, 10, 99, 100, 4096, 1_000_000, Int64.max])
    func decimals(value: Int64) {
        var buffer: [UInt8] = []
        buffer.appendDecimal(UInt64(value))
        #expect(String(decoding: buffer, as: UTF8.self) == String(value))
    }

    @Test("values cannot inject fields or end the head")
    func injection() throws {
        var headers = HTTPHeaders()
        headers.append(name: "X-Evil", value: "a\r\nX-Injected: 1\r\n\r\nGET /smuggled HTTP/1.1")
        headers.append(.contentType, value: "\u{0}text\u{7F}")
        var buffer: [UInt8] = []
        HTTPResponseHead(status: .ok, headers: headers).serialize(into: &buffer)
        var parser = HTTPResponseParser()
        let response = try #require(parser.parse(buffer, requestMethod: .get).value)
        #expect(response.headers.count == 2)
        #expect(!response.headers.contains(name: "X-Injected"))
        #expect(response.headers["x-evil"] == "a  X-Injected: 1    GET /smuggled HTTP/1.1")
        #expect(response.headers.first(.contentType) == "text")
        #expect(parser.parse(buffer, requestMethod: .get).consumed == buffer.count)
    }

    @Test("response heads round-trip through the response parser")
    func responseRoundTrip() throws {
        let heads: [HTTPResponseHead] = [
            HTTPResponseHead(status: .ok, headers: ["Content-Length": "12", "ETag": "\"abc\"", "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]),
            HTTPResponseHead(status: .noContent),
            HTTPResponseHead(status: .notModified, headers: ["ETag": "\"abc\""]),
            HTTPResponseHead(status: .notFound, version: .http1_0, headers: ["Content-Length": "0"]),
            HTTPResponseHead(status: 299, reasonPhrase: "Custom Phrase", headers: ["Transfer-Encoding": "chunked", "X-Obs": "caf\u{e9}"]),
            HTTPResponseHead(status: .ok, reasonPhrase: "", headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"]),
        ]
        for head in heads {
            var buffer: [UInt8] = []
            head.serialize(into: &buffer)
            var parser = HTTPResponseParser()
            let result = parser.parse(buffer, requestMethod: .get)
            #expect(result.value?.head == head, "\(head)")
            #expect(result.consumed == buffer.count)
        }
        #expect(HTTPResponseHead(status: .ok) == HTTPResponseHead(status: .ok, reasonPhrase: "OK"))
        #expect(HTTPResponseHead(status: .ok) != HTTPResponseHead(status: .ok, reasonPhrase: "Fine"))
    }

    @Test("request heads round-trip through the request parser")
    func requestRoundTrip() throws {
        let cases: [(HTTPMethod, String, HTTPHeaders)] = [
            (.get, "/", ["Host": "localhost"]),
            (.put, "/blobs/\(PercentEncoding.encode("a b/c?d"))", ["Host": "blobd", "Content-Length": "5", "If-Match": "\"e1\""]),
            (.post, "/upload?x=1", ["Host": "blobd", "Transfer-Encoding": "chunked", "Expect": "100-continue"]),
            (.delete, "/blobs/k", ["Host": "blobd", "If-None-Match": "*", "Connection": "close"]),
            (.head, "/blobs/k", ["Host": "h", "Range": "bytes=0-10"]),
            (.options, "*", ["Host": "h"]),
            (.other("PATCH"), "/p", ["Host": "h", "Last-Event-ID": "7"]),
        ]
        for (method, target, headers) in cases {
            var buffer: [UInt8] = []
            HTTPSerializer.appendRequest(method: method, target: target, headers: headers, into: &buffer)
            var parser = HTTPRequestParser()
            let result = parser.parse(buffer)
            let head = try #require(result.value, "\(method) \(target)")
            #expect(result.consumed == buffer.count)
            #expect(head.method == method)
            #expect(head.target == target)
            #expect(head.headers == headers)
            #expect(head.version == .http1_1)
        }
        var buffer: [UInt8] = []
        HTTPSerializer.appendRequest(method: .get, target: "/old", version: .http1_0, headers: [:], into: &buffer)
        #expect(buffer == bytes("GET /old HTTP/1.0\r\n\r\n"))
        #expect(parseRequest(buffer).value?.version == .http1_0)
    }

    @Test("a request written by appendRequestLine and appendHeader parses")
    func requestBuildingBlocks() throws {
        var buffer: [UInt8] = []
        HTTPSerializer.appendRequestLine(method: .put, target: "/k", into: &buffer)
        HTTPSerializer.appendHeader(.host, "blobd", into: &buffer)
        HTTPSerializer.appendHeader(.transferEncoding, "chunked", into: &buffer)
        HTTPSerializer.appendEndOfHead(into: &buffer)
        ChunkedEncoder.appendChunk(bytes("abc"), into: &buffer)
        ChunkedEncoder.appendLastChunk(into: &buffer)
        var parser = HTTPRequestParser()
        guard case .complete(let head, let consumed) = parser.parse(buffer) else {
            Issue.record("request did not parse")
            return
        }
        #expect(head.isChunked)
        let body = Array(buffer[consumed...])
        let decoded = try decodeChunked(body, cuts: [])
        #expect(decoded.payload == bytes("abc"))
        #expect(decoded.consumed == body.count)
    }
}
