import Testing

@testable import HTTP1

func parseResponse(_ text: String, method: HTTPMethod = .get, limits: HTTPHeadLimits = HTTPHeadLimits())
    -> HTTPParseResult<HTTPResponseParser.Response>
{
    var parser = HTTPResponseParser(limits: limits)
    return parser.parse(bytes(text), requestMethod: method)
}

let validResponses: [String] = [
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
    "HTTP/1.1 204 No Content\r\nETag: \"x\"\r\n\r\n",
    "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n",
    "HTTP/1.1 100 Continue\r\n\r\n",
    "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 412 \r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 201\r\nLocation: /blobs/k\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200 Fine By Me\r\nConnection: close\r\nContent-Length: 2\r\n\r\n",
]

@Suite("Response parser")
struct ResponseParserTests {
    @Test("content-length response")
    func contentLength() throws {
        let response = try #require(parseResponse(validResponses[0]).value)
        #expect(response.status == .ok)
        #expect(response.head.version == .http1_1)
        #expect(response.head.reasonPhrase == "OK")
        #expect(response.framing == .contentLength(5))
        #expect(response.keepAlive)
        #expect(!response.isInterim)
        #expect(response.headers.first(.contentLength) == "5")
    }

    @Test("chunked and close-delimited responses")
    func framings() throws {
        #expect(parseResponse(validResponses[1]).value?.framing == .chunked)
        let sse = try #require(parseResponse(validResponses[2]).value)
        #expect(sse.framing == .untilClose)
        #expect(!sse.keepAlive)
    }

    @Test("no body for HEAD, 1xx, 204 and 304, whatever the fields say")
    func noBody() throws {
        #expect(parseResponse(validResponses[0], method: .head).value?.framing == HTTPBodyFraming.none)
        #expect(parseResponse(validResponses[1], method: .head).value?.framing == HTTPBodyFraming.none)
        #expect(parseResponse(validResponses[2], method: .head).value?.keepAlive == true)
        #expect(parseResponse(validResponses[3]).value?.framing == HTTPBodyFraming.none)
        #expect(parseResponse(validResponses[3]).value?.keepAlive == true)
        #expect(parseResponse(validResponses[4]).value?.framing == HTTPBodyFraming.none)
        #expect(parseResponse(validResponses[5]).value?.framing == HTTPBodyFraming.none)
    }

    @Test("100 Continue is reported as interim; the final response follows in the same buffer")
    func interim() throws {
        let stream = bytes(validResponses[5] + validResponses[0] + "hello")
        var parser = HTTPResponseParser()
        guard case .complete(let first, let consumed) = parser.parse(stream, requestMethod: .put) else {
            Issue.record("expected the interim response")
            return
        }
        #expect(first.isInterim)
        #expect(first.status == .continue)
        #expect(consumed == validResponses[5].utf8.count)
        guard case .complete(let final, let used) = parser.parse(Array(stream[consumed...]), requestMethod: .put) else {
            Issue.record("expected the final response")
            return
        }
        #expect(!final.isInterim)
        #expect(final.status == .ok)
        #expect(Array(stream[(consumed + used)...]) == bytes("hello"))
    }

    @Test("101 Switching Protocols is final and ends HTTP on the connection")
    func switching() throws {
        let response = try #require(parseResponse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n").value)
        #expect(!response.isInterim)
        #expect(response.framing == .none)
        #expect(!response.keepAlive)
        let early = try #require(parseResponse("HTTP/1.1 103 Early Hints\r\n\r\n").value)
        #expect(early.isInterim)
    }

    @Test("keep-alive by version and Connection")
    func keepAlive() {
        #expect(parseResponse(validResponses[6]).value?.keepAlive == false)
        #expect(parseResponse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").value?.keepAlive == true)
        #expect(parseResponse(validResponses[9]).value?.keepAlive == false)
        #expect(parseResponse(validResponses[0]).value?.keepAlive == true)
    }

    @Test("status lines with empty or missing reason phrases")
    func reasonPhrases() throws {
        let empty = try #require(parseResponse(validResponses[7]).value)
        #expect(empty.status == .preconditionFailed)
        #expect(empty.head.reasonPhrase == "")
        let missing = try #require(parseResponse(validResponses[8]).value)
        #expect(missing.status == .created)
        #expect(missing.headers.first(.location) == "/blobs/k")
        let custom = try #require(parseResponse(validResponses[9]).value)
        #expect(custom.head.reasonPhrase == "Fine By Me")
        let unknown = try #require(parseResponse("HTTP/1.1 299 Whatever\r\nContent-Length: 0\r\n\r\n").value)
        #expect(unknown.status.code == 299)
    }

    @Test("every valid response parses the same one byte at a time and in random splits", arguments: validResponses.indices)
    func incremental(index: Int) {
        let message = bytes(validResponses[index])
        var oneShotParser = HTTPResponseParser()
        let oneShot = oneShotParser.parse(message, requestMethod: .get)
        #expect(oneShot.value != nil)
        var parser = HTTPResponseParser()
        let (single, at) = feedPrefixes(message, ends: Array(0..<message.count)) { parser.parse($0, requestMethod: .get) }
        #expect(single == oneShot)
        #expect(at == message.count)
        var rng = SplitMix64(seed: UInt64(index) + 100)
        for _ in 0..<30 {
            var splitParser = HTTPResponseParser()
            let cuts = randomCuts(count: message.count, pieces: 4, using: &rng)
            #expect(feedPrefixes(message, ends: cuts) { splitParser.parse($0, requestMethod: .get) }.result == oneShot)
        }
    }

    static let malformed: [(String, HTTPParseError)] = [
        ("HTTP/1.1 2x0 OK\r\n\r\n", .invalidStatusCode),
        ("HTTP/1.1 099 Low\r\n\r\n", .invalidStatusCode),
        ("HTTP/1.1 600 High\r\n\r\n", .invalidStatusCode),
        ("HTTP/1.1 200OK\r\n\r\n", .invalidStatusCode),
        ("HTTP/1.1 2000 OK\r\n\r\n", .invalidStatusCode),
        ("HTTP/1.1 20\r\n\r\n", .invalidStartLine),
        ("HTTP/1.1  200 OK\r\n\r\n", .invalidStatusCode),
        ("HTTP/1.1\r\n\r\n", .invalidStartLine),
        ("HTTP/2 200 OK\r\n\r\n", .invalidStartLine),
        ("http/1.1 200 OK\r\n\r\n", .invalidVersion),
        ("HTTP/2.0 200 OK\r\n\r\n", .unsupportedVersion),
        ("HTTP/1.1 200 O\u{1}K\r\n\r\n", .invalidStartLine),
        ("HTTP/1.1 200 OK\nContent-Length: 1\n\n", .invalidLineEnding),
        ("HTTP/1.1 200 O\rK\r\n\r\n", .invalidLineEnding),
        ("HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", .invalidLineEnding),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", .contentLengthWithTransferEncoding),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .conflictingContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferCoding),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", .invalidTransferEncoding),
        ("HTTP/1.1 200 OK\r\nX : y\r\n\r\n", .whitespaceBeforeColon),
        ("HTTP/1.1 200 OK\r\nX: y\r\n z\r\n\r\n", .obsoleteLineFolding),
        ("HTTP/1.1 200 OK\r\nX: \u{0}\r\n\r\n", .invalidHeaderValue),
    ]

    @Test("malformed responses fail with their specific error", arguments: malformed.indices)
    func malformedResponses(index: Int) {
        let (text, error) = Self.malformed[index]
        #expect(parseResponse(text).error == error)
        var parser = HTTPResponseParser()
        let message = bytes(text)
        #expect(feedPrefixes(message, ends: Array(0..<message.count)) { parser.parse($0, requestMethod: .get) }.result.error == error)
    }

    @Test("limits apply to responses too")
    func limits() {
        let limits = HTTPHeadLimits(maxStartLineLength: 20, maxHeadSize: 200, maxHeaderCount: 2)
        #expect(parseResponse("HTTP/1.1 200 OKOKOKO\r\n\r\n", limits: limits).value != nil)  // 20 bytes
        #expect(parseResponse("HTTP/1.1 200 OKOKOKOK\r\n\r\n", limits: limits).error == .requestLineTooLong)
        #expect(parseResponse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n", limits: limits).value != nil)
        #expect(parseResponse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits).error == .tooManyHeaders)
        let big = "HTTP/1.1 200 OK\r\nA: " + String(repeating: "a", count: 200) + "\r\n\r\n"
        #expect(parseResponse(big, limits: limits).error == .headTooLarge)
    }

    @Test("a response parser resets and reparses")
    func reset() {
        var parser = HTTPResponseParser()
        #expect(parser.parse(bytes("HTTP/1.1 200 OK\r\nX"), requestMethod: .get).isNeedMore)
        parser.reset()
        #expect(parser.parse(bytes("HTTP/1.1 404 Not Found\r\n\r\n"), requestMethod: .get).value?.status == .notFound)
    }
}
