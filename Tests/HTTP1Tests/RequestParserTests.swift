import Testing

@testable import HTTP1

/// Valid requests that every incremental test replays.
let validRequests: [String] = [
    "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET /blobs/a%20b?prefix=x&limit=10 HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8.5\r\nAccept: */*\r\n\r\n",
    "PUT /blobs/k HTTP/1.1\r\nHost: blobd\r\nContent-Length: 5\r\nContent-Type: text/plain\r\nIf-Match: \"abc\"\r\n\r\n",
    "POST /upload HTTP/1.1\r\nHost: blobd\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n",
    "HEAD /x HTTP/1.0\r\n\r\n",
    "DELETE /blobs/k HTTP/1.1\r\nhost: a\r\nIF-NONE-MATCH: *\r\nConnection: close\r\n\r\n",
    "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
    "PATCH /p HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET http://example.com:8080/a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n",
    "\r\n\r\nGET /after-empty-lines HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET / HTTP/1.1\r\nHost:x\r\nX-Empty:\r\nX-Spaces: \t  padded value \t \r\nX-Obs: caf\u{e9}\r\n\r\n",
    "GET /events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: 42\r\nRange: bytes=0-99\r\n\r\n",
    "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
    "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n",
]

@Suite("Request parser: valid requests")
struct RequestParserTests {
    @Test("parses a minimal GET")
    func minimalGet() throws {
        let message = bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let result = parseRequest(message)
        let head = try #require(result.value)
        #expect(result.consumed == message.count)
        #expect(head.method == .get)
        #expect(head.version == .http1_1)
        #expect(head.target == "/")
        #expect(head.path == "/")
        #expect(head.query == nil)
        #expect(head.host == "x")
        #expect(head.framing == .none)
        #expect(head.keepAlive)
        #expect(!head.expectsContinue)
        #expect(!head.hasBody)
        #expect(head.headers.count == 1)
    }

    @Test("splits target into path and query")
    func pathAndQuery() throws {
        let head = try #require(parseRequest(bytes(validRequests[1])).value)
        #expect(head.target == "/blobs/a%20b?prefix=x&limit=10")
        #expect(head.path == "/blobs/a%20b")
        #expect(Array(head.pathBytes) == bytes("/blobs/a%20b"))
        #expect(head.query == "prefix=x&limit=10")
        #expect(try head.decodedPath() == bytes("/blobs/a b"))
        #expect(try head.queryItems() == [QueryItem(name: "prefix", value: "x"), QueryItem(name: "limit", value: "10")])
        #expect(head.headers.first(.userAgent) == "curl/8.5")
        #expect(head.headers["accept"] == "*/*")
    }

    @Test("an empty query is present but empty; a second ? belongs to the query")
    func queryEdges() throws {
        let empty = try #require(parseRequest(bytes("GET /a? HTTP/1.1\r\nHost: x\r\n\r\n")).value)
        #expect(empty.path == "/a")
        #expect(empty.query == "")
        #expect(try empty.queryItems() == [])
        let twice = try #require(parseRequest(bytes("GET /a?b=?c HTTP/1.1\r\nHost: x\r\n\r\n")).value)
        #expect(twice.query == "b=?c")
        #expect(try twice.queryItems() == [QueryItem(name: "b", value: "?c")])
    }

    @Test("absolute-form and asterisk-form targets")
    func targetForms() throws {
        let absolute = try #require(parseRequest(bytes(validRequests[8])).value)
        #expect(absolute.target == "http://example.com:8080/a/b?c=d")
        #expect(absolute.path == "/a/b")
        #expect(absolute.query == "c=d")
        let bare = try #require(parseRequest(bytes("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n")).value)
        #expect(bare.path == "")
        let asterisk = try #require(parseRequest(bytes(validRequests[6])).value)
        #expect(asterisk.method == .options)
        #expect(asterisk.path == "*")
    }

    @Test("known and unknown methods", arguments: [
        ("GET", HTTPMethod.get), ("HEAD", .head), ("PUT", .put), ("POST", .post), ("DELETE", .delete),
        ("OPTIONS", .options), ("PATCH", .other("PATCH")), ("get", .other("get")), ("GETS", .other("GETS")),
        ("PUX", .other("PUX")), ("M-SEARCH", .other("M-SEARCH")), ("!#$%&'*+-.^_`|~", .other("!#$%&'*+-.^_`|~")),
    ])
    func methods(token: String, method: HTTPMethod) throws {
        let head = try #require(parseRequest(bytes("\(token) / HTTP/1.1\r\nHost: x\r\n\r\n")).value)
        #expect(head.method == method)
        #expect(head.method.token == token)
        #expect(HTTPMethod(token) == method)
    }

    @Test("HTTPMethod(String) rejects non-tokens")
    func methodInit() {
        #expect(HTTPMethod("") == nil)
        #expect(HTTPMethod("GE T") == nil)
        #expect(HTTPMethod("GÉT") == nil)
    }

    @Test("content-length framing")
    func contentLength() throws {
        let head = try #require(parseRequest(bytes(validRequests[2])).value)
        #expect(head.framing == .contentLength(5))
        #expect(head.contentLength == 5)
        #expect(head.hasBody)
        #expect(head.contentType == "text/plain")
        #expect(head.ifMatch == "\"abc\"")
        let zero = try #require(parseRequest(bytes("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")).value)
        #expect(zero.framing == .contentLength(0))
        #expect(!zero.hasBody)
        let big = try #require(
            parseRequest(bytes("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 9223372036854775807\r\n\r\n")).value)
        #expect(big.contentLength == Int64.max)
        let padded = try #require(parseRequest(bytes("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length:  007 \r\n\r\n")).value)
        #expect(padded.contentLength == 7)
        let same = try #require(parseRequest(bytes(validRequests[13])).value)
        #expect(same.contentLength == 3)
    }

    @Test("chunked framing, case-insensitive, with empty list elements")
    func chunked() throws {
        let head = try #require(parseRequest(bytes(validRequests[3])).value)
        #expect(head.framing == .chunked)
        #expect(head.isChunked)
        #expect(head.hasBody)
        #expect(head.expectsContinue)
        #expect(parseRequest(bytes(validRequests[14])).value?.framing == .chunked)
        let listy = parseRequest(bytes("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: , chunked ,\r\n\r\n"))
        #expect(listy.value?.framing == .chunked)
    }

    @Test("keep-alive decision", arguments: [
        ("HTTP/1.1", nil, true), ("HTTP/1.1", "close", false), ("HTTP/1.1", "Close", false),
        ("HTTP/1.1", "keep-alive", true), ("HTTP/1.1", "keep-alive, close", false), ("HTTP/1.1", "upgrade", true),
        ("HTTP/1.0", nil, false), ("HTTP/1.0", "keep-alive", true), ("HTTP/1.0", "Keep-Alive", true),
        ("HTTP/1.0", "close", false), ("HTTP/1.0", "keep-alive, close", false), ("HTTP/1.1", "closed", true),
    ] as [(String, String?, Bool)])
    func keepAlive(version: String, connection: String?, expected: Bool) throws {
        var text = "GET / \(version)\r\nHost: x\r\n"
        if let connection { text += "Connection: \(connection)\r\n" }
        let head = try #require(parseRequest(bytes(text + "\r\n")).value)
        #expect(head.keepAlive == expected)
    }

    @Test("Connection options split over several fields")
    func connectionFields() throws {
        let head = try #require(
            parseRequest(bytes("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n")).value)
        #expect(!head.keepAlive)
    }

    @Test("Expect: 100-continue only counts in HTTP/1.1")
    func expectContinue() throws {
        let yes = try #require(parseRequest(bytes("PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n")).value)
        #expect(yes.expectsContinue)
        let old = try #require(parseRequest(bytes("PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n")).value)
        #expect(!old.expectsContinue)
        let other = try #require(parseRequest(bytes("PUT / HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n")).value)
        #expect(!other.expectsContinue)
        #expect(other.headers.first(.expect) == "something")
    }

    @Test("field values are trimmed; empty and obs-text values survive")
    func fieldValues() throws {
        let head = try #require(parseRequest(bytes(validRequests[10])).value)
        #expect(head.host == "x")
        #expect(head.headers["X-Empty"] == "")
        #expect(head.headers["x-spaces"] == "padded value")
        #expect(head.headers["X-OBS"] == "caf\u{e9}")
        #expect(Array(head.headers.valueBytes(at: 3)) == [0x63, 0x61, 0x66, 0xC3, 0xA9])
        #expect(head.headers.name(at: 2) == "X-Spaces")
    }

    @Test("quick accessors for the daemon's fields")
    func accessors() throws {
        let head = try #require(parseRequest(bytes(validRequests[11])).value)
        #expect(head.lastEventID == "42")
        #expect(head.range == "bytes=0-99")
        #expect(head.ifMatch == nil)
        #expect(head.ifNoneMatch == nil)
        #expect(head.contentType == nil)
        let delete = try #require(parseRequest(bytes(validRequests[5])).value)
        #expect(delete.ifNoneMatch == "*")
        #expect(delete.host == "a")
        #expect(!delete.keepAlive)
        #expect(Array(try #require(delete.headers.firstBytes(.ifNoneMatch))) == bytes("*"))
    }

    @Test("HTTP/1.0 needs no Host; requiresHost can be turned off")
    func hostRules() {
        #expect(parseRequest(bytes("GET / HTTP/1.0\r\n\r\n")).value != nil)
        #expect(parseRequest(bytes("GET / HTTP/1.1\r\n\r\n"), requiresHost: false).value != nil)
        #expect(parseRequest(bytes("GET / HTTP/1.1\r\n\r\n")).error == .missingHost)
    }

    @Test("empty lines before the request line are skipped and consumed")
    func leadingEmptyLines() throws {
        let message = bytes(validRequests[9])
        let result = parseRequest(message)
        #expect(result.value?.path == "/after-empty-lines")
        #expect(result.consumed == message.count)
    }

    @Test("needs more until the empty line arrives")
    func needMore() {
        for text in ["", "G", "GET / HTTP/1.1", "GET / HTTP/1.1\r", "GET / HTTP/1.1\r\nHost: x\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r"] {
            #expect(parseRequest(bytes(text)).isNeedMore, "\(text.debugDescription)")
        }
    }

    @Test("every valid request parses the same one byte at a time", arguments: validRequests.indices)
    func byteByByte(index: Int) throws {
        let message = bytes(validRequests[index])
        let oneShot = parseRequest(message)
        #expect(oneShot.value != nil)
        let (incremental, at) = parseRequestByteByByte(message)
        #expect(incremental == oneShot)
        #expect(at == message.count)
    }

    @Test("every valid request parses the same in random splits", arguments: validRequests.indices)
    func randomSplits(index: Int) {
        let message = bytes(validRequests[index])
        let oneShot = parseRequest(message)
        var rng = SplitMix64(seed: UInt64(index) &+ 1)
        for round in 0..<50 {
            var parser = HTTPRequestParser()
            let cuts = randomCuts(count: message.count, pieces: 1 + round % 6, using: &rng)
            let (result, _) = feedPrefixes(message, ends: cuts) { parser.parse($0) }
            #expect(result == oneShot, "cuts \(cuts)")
        }
    }

    @Test("pipelined requests with bodies parse in sequence")
    func pipelining() throws {
        let stream = bytes(
            "GET /one HTTP/1.1\r\nHost: x\r\n\r\n"
                + "PUT /two HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                + "POST /three HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                + "DELETE /four HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        var parser = HTTPRequestParser()
        var offset = 0
        var paths: [String] = []
        var bodies: [[UInt8]] = []
        while offset < stream.count {
            let rest = Array(stream[offset...])
            guard case .complete(let head, let consumed) = parser.parse(rest) else {
                Issue.record("expected a head at \(offset)")
                return
            }
            paths.append(head.path)
            offset += consumed
            switch head.framing {
            case .contentLength(let length):
                bodies.append(Array(stream[offset..<offset + Int(length)]))
                offset += Int(length)
            case .chunked:
                var decoder = ChunkedDecoder()
                var ranges: [Range<Int>] = []
                let body = Array(stream[offset...])
                let used = try decoder.decode(body, payload: &ranges)
                #expect(decoder.isComplete)
                bodies.append(ranges.flatMap { body[$0] })
                offset += used
            default:
                bodies.append([])
            }
        }
        #expect(paths == ["/one", "/two", "/three", "/four"])
        #expect(bodies == [[], bytes("hello"), bytes("abc"), []])
    }

    @Test("all pipelined heads in one buffer, byte by byte")
    func pipelinedByteByByte() {
        let first = validRequests[0]
        let second = validRequests[1]
        let stream = bytes(first + second)
        var parser = HTTPRequestParser()
        let (result, at) = feedPrefixes(stream, ends: Array(0..<stream.count)) { parser.parse($0) }
        #expect(result.consumed == first.utf8.count)
        #expect(at == first.utf8.count)
        let rest = Array(stream[first.utf8.count...])
        let (next, _) = feedPrefixes(rest, ends: Array(0..<rest.count)) { parser.parse($0) }
        #expect(next == parseRequest(bytes(second)))
    }

    @Test("a head kept by the caller is not disturbed when the parser reuses its buffers")
    func storageReuse() throws {
        var parser = HTTPRequestParser()
        let first = try #require(parser.parse(bytes("GET /first HTTP/1.1\r\nHost: one\r\n\r\n")).value)
        let second = try #require(parser.parse(bytes("GET /second-longer HTTP/1.1\r\nHost: two\r\n\r\n")).value)
        #expect(first.path == "/first")
        #expect(first.host == "one")
        #expect(second.path == "/second-longer")
        #expect(second.host == "two")
        for index in 0..<100 {
            let head = try #require(parser.parse(bytes("GET /\(index) HTTP/1.1\r\nHost: h\(index)\r\n\r\n")).value)
            #expect(head.path == "/\(index)")
            #expect(head.host == "h\(index)")
        }
        #expect(first.path == "/first")
    }

    @Test("reset discards a partial head")
    func reset() {
        var parser = HTTPRequestParser()
        #expect(parser.parse(bytes("GET /partial HTTP/1.1\r\nHost")).isNeedMore)
        parser.reset()
        let result = parser.parse(bytes("GET /new HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(result.value?.path == "/new")
    }

    @Test("after an error the parser accepts a new head")
    func afterError() {
        var parser = HTTPRequestParser()
        #expect(parser.parse(bytes("GET / HTTP/1.1\nHost: x\n\n")).error == .invalidLineEnding)
        #expect(parser.parse(bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n")).value != nil)
    }
}
