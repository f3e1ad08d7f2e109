import Testing

@testable import HTTP1

/// A request that must be rejected, and the error that must name why.
struct MalformedCase: CustomTestStringConvertible, Sendable {
    let name: String
    let message: [UInt8]
    let error: HTTPParseError

    init(_ name: String, _ text: String, _ error: HTTPParseError) {
        self.init(name, bytes(text), error)
    }

    init(_ name: String, _ message: [UInt8], _ error: HTTPParseError) {
        self.name = name
        self.message = message
        self.error = error
    }

    var testDescription: String { name }
}

private let host = "Host: x\r\n"

let malformedRequests: [MalformedCase] = [
    // Request line structure.
    MalformedCase("no spaces at all", "GET\r\n\(host)\r\n", .invalidStartLine),
    MalformedCase("HTTP/0.9 style, no version", "GET /\r\n\(host)\r\n", .invalidStartLine),
    MalformedCase("trailing space after version", "GET / HTTP/1.1 \r\n\(host)\r\n", .invalidStartLine),
    MalformedCase("two spaces before version", "GET /  HTTP/1.1\r\n\(host)\r\n", .invalidStartLine),
    MalformedCase("extra word after version", "GET / HTTP/1.1 extra\r\n\(host)\r\n", .invalidStartLine),
    MalformedCase("empty version", "GET / \r\n\(host)\r\n", .invalidVersion),
    // Methods.
    MalformedCase("leading space", " GET / HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    MalformedCase("empty method", " / HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    MalformedCase("parenthesis in method", "G(T / HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    MalformedCase("NUL in method", "GE\u{0}T / HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    MalformedCase("control byte first", "\u{1}GET / HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    MalformedCase("tab after method", "GET\t/ HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    MalformedCase("non-ASCII method", "GÉT / HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    MalformedCase("slash in method", "GET/ / HTTP/1.1\r\n\(host)\r\n", .invalidMethod),
    // Targets.
    MalformedCase("missing target, double space", "GET  HTTP/1.1\r\n\(host)\r\n", .missingTarget),
    MalformedCase("missing target, line ends", "GET \r\n\(host)\r\n", .missingTarget),
    MalformedCase("NUL in target", "GET /a\u{0}b HTTP/1.1\r\n\(host)\r\n", .invalidTarget),
    MalformedCase("DEL in target", "GET /a\u{7F}b HTTP/1.1\r\n\(host)\r\n", .invalidTarget),
    MalformedCase("tab in target", "GET /a\tb HTTP/1.1\r\n\(host)\r\n", .invalidTarget),
    MalformedCase("escape byte in target", "GET /a\u{1B}b HTTP/1.1\r\n\(host)\r\n", .invalidTarget),
    MalformedCase("fragment in target", "GET /a#frag HTTP/1.1\r\n\(host)\r\n", .invalidTarget),
    MalformedCase("raw UTF-8 in target", "GET /café HTTP/1.1\r\n\(host)\r\n", .invalidTarget),
    // Versions.
    MalformedCase("lowercase version", "GET / http/1.1\r\n\(host)\r\n", .invalidVersion),
    MalformedCase("version without minor", "GET / HTTP/1\r\n\(host)\r\n", .invalidVersion),
    MalformedCase("version with extra part", "GET / HTTP/1.1.1\r\n\(host)\r\n", .invalidVersion),
    MalformedCase("HTTPS scheme as version", "GET / HTTPS/1.1\r\n\(host)\r\n", .invalidVersion),
    MalformedCase("letter as minor", "GET / HTTP/1.x\r\n\(host)\r\n", .invalidVersion),
    MalformedCase("two-digit major", "GET / HTTP/11.1\r\n\(host)\r\n", .invalidVersion),
    MalformedCase("HTTP/2.0", "GET / HTTP/2.0\r\n\(host)\r\n", .unsupportedVersion),
    MalformedCase("HTTP/0.9", "GET / HTTP/0.9\r\n\(host)\r\n", .unsupportedVersion),
    MalformedCase("HTTP/1.2", "GET / HTTP/1.2\r\n\(host)\r\n", .unsupportedVersion),
    MalformedCase("HTTP/3.0", "GET / HTTP/3.0\r\n\(host)\r\n", .unsupportedVersion),
    // Line endings.
    MalformedCase("bare LF everywhere", "GET / HTTP/1.1\nHost: x\n\n", .invalidLineEnding),
    MalformedCase("bare LF after a field", "GET / HTTP/1.1\r\nHost: x\n\r\n", .invalidLineEnding),
    MalformedCase("bare LF as the empty line", "GET / HTTP/1.1\r\nHost: x\r\n\n", .invalidLineEnding),
    MalformedCase("bare CR after request line", "GET / HTTP/1.1\rHost: x\r\n\r\n", .invalidLineEnding),
    MalformedCase("bare CR inside a value", "GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", .invalidLineEnding),
    MalformedCase("leading bare LF", "\nGET / HTTP/1.1\r\n\(host)\r\n", .invalidLineEnding),
    MalformedCase("CR CR LF as the empty line", "GET / HTTP/1.1\r\n\(host)\r\r\n", .invalidLineEnding),
    MalformedCase("bare CR inside the target", "GET /a\rb HTTP/1.1\r\n\(host)\r\n", .invalidLineEnding),
    MalformedCase("bare CR inside the method", "GE\rT / HTTP/1.1\r\n\(host)\r\n", .invalidLineEnding),
    MalformedCase("bare CR inside the version", "GET / HTTP/1\r.1\r\n\(host)\r\n", .invalidLineEnding),
    MalformedCase("bare CR inside a name", "GET / HTTP/1.1\r\n\(host)Na\rme: x\r\n\r\n", .invalidLineEnding),
    MalformedCase("bare CR starting a field line", "GET / HTTP/1.1\r\n\(host)\rX: y\r\n\r\n", .invalidLineEnding),
    MalformedCase("CR CR LF as a field line", "GET / HTTP/1.1\r\n\(host)\r\r\nX: y\r\n\r\n", .invalidLineEnding),
    // Field lines.
    MalformedCase("obs-fold with spaces", "GET / HTTP/1.1\r\n\(host)X-A: a\r\n  continued\r\n\r\n", .obsoleteLineFolding),
    MalformedCase("obs-fold with a tab", "GET / HTTP/1.1\r\n\(host)X-A: a\r\n\tcontinued\r\n\r\n", .obsoleteLineFolding),
    MalformedCase("whitespace before the first field", "GET / HTTP/1.1\r\n Host: x\r\n\r\n", .obsoleteLineFolding),
    MalformedCase("space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", .whitespaceBeforeColon),
    MalformedCase("tab before colon", "GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", .whitespaceBeforeColon),
    MalformedCase("space before colon in Content-Length", "POST / HTTP/1.1\r\n\(host)Content-Length : 5\r\n\r\n", .whitespaceBeforeColon),
    MalformedCase("space before colon in Transfer-Encoding", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding : chunked\r\n\r\n", .whitespaceBeforeColon),
    MalformedCase("empty field name", "GET / HTTP/1.1\r\n\(host): value\r\n\r\n", .invalidHeaderName),
    MalformedCase("no colon", "GET / HTTP/1.1\r\n\(host)NoColon\r\n\r\n", .invalidHeaderName),
    MalformedCase("parenthesis in name", "GET / HTTP/1.1\r\n\(host)Bad(Name): x\r\n\r\n", .invalidHeaderName),
    MalformedCase("space inside name", "GET / HTTP/1.1\r\n\(host)Bad Name: x\r\n\r\n", .invalidHeaderName),
    MalformedCase("NUL in name", "GET / HTTP/1.1\r\n\(host)Na\u{0}me: x\r\n\r\n", .invalidHeaderName),
    MalformedCase("non-ASCII name", "GET / HTTP/1.1\r\n\(host)Héader: x\r\n\r\n", .invalidHeaderName),
    MalformedCase("slash in name", "GET / HTTP/1.1\r\n\(host)X/Y: x\r\n\r\n", .invalidHeaderName),
    MalformedCase("NUL in value", "GET / HTTP/1.1\r\n\(host)X: a\u{0}b\r\n\r\n", .invalidHeaderValue),
    MalformedCase("SOH in value", "GET / HTTP/1.1\r\n\(host)X: a\u{1}b\r\n\r\n", .invalidHeaderValue),
    MalformedCase("DEL in value", "GET / HTTP/1.1\r\n\(host)X: a\u{7F}b\r\n\r\n", .invalidHeaderValue),
    MalformedCase("escape sequence in value", "GET / HTTP/1.1\r\n\(host)X: \u{1B}[31m\r\n\r\n", .invalidHeaderValue),
    MalformedCase("vertical tab in value", "GET / HTTP/1.1\r\n\(host)X: a\u{B}b\r\n\r\n", .invalidHeaderValue),
    MalformedCase("form feed in Host", "GET / HTTP/1.1\r\nHost: a\u{C}\r\n\r\n", .invalidHeaderValue),
    // Content-Length.
    MalformedCase("negative length", "POST / HTTP/1.1\r\n\(host)Content-Length: -1\r\n\r\n", .invalidContentLength),
    MalformedCase("plus sign", "POST / HTTP/1.1\r\n\(host)Content-Length: +5\r\n\r\n", .invalidContentLength),
    MalformedCase("trailing letter", "POST / HTTP/1.1\r\n\(host)Content-Length: 5a\r\n\r\n", .invalidContentLength),
    MalformedCase("hexadecimal", "POST / HTTP/1.1\r\n\(host)Content-Length: 0x10\r\n\r\n", .invalidContentLength),
    MalformedCase("empty length", "POST / HTTP/1.1\r\n\(host)Content-Length:\r\n\r\n", .invalidContentLength),
    MalformedCase("inner space", "POST / HTTP/1.1\r\n\(host)Content-Length: 1 2\r\n\r\n", .invalidContentLength),
    MalformedCase("decimal point", "POST / HTTP/1.1\r\n\(host)Content-Length: 1.5\r\n\r\n", .invalidContentLength),
    MalformedCase("Int64.max + 1", "POST / HTTP/1.1\r\n\(host)Content-Length: 9223372036854775808\r\n\r\n", .invalidContentLength),
    MalformedCase("far beyond Int64", "POST / HTTP/1.1\r\n\(host)Content-Length: 99999999999999999999999\r\n\r\n", .invalidContentLength),
    MalformedCase("comma list of lengths", "POST / HTTP/1.1\r\n\(host)Content-Length: 5, 5\r\n\r\n", .invalidContentLength),
    MalformedCase("differing duplicates", "POST / HTTP/1.1\r\n\(host)Content-Length: 5\r\nContent-Length: 6\r\n\r\n", .conflictingContentLength),
    MalformedCase("duplicates differing in leading zeros are equal, then a third differs",
        "POST / HTTP/1.1\r\n\(host)Content-Length: 5\r\ncontent-length: 005\r\nCONTENT-LENGTH: 50\r\n\r\n", .conflictingContentLength),
    // Transfer-Encoding and smuggling.
    MalformedCase("Content-Length then Transfer-Encoding", "POST / HTTP/1.1\r\n\(host)Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", .contentLengthWithTransferEncoding),
    MalformedCase("Transfer-Encoding then Content-Length", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", .contentLengthWithTransferEncoding),
    MalformedCase("Content-Length 0 with Transfer-Encoding", "POST / HTTP/1.1\r\n\(host)Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n", .contentLengthWithTransferEncoding),
    MalformedCase("chunked then gzip", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, gzip\r\n\r\n", .invalidTransferEncoding),
    MalformedCase("chunked twice in one field", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, chunked\r\n\r\n", .invalidTransferEncoding),
    MalformedCase("chunked twice in two fields", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding),
    MalformedCase("chunked then gzip in two fields", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", .invalidTransferEncoding),
    MalformedCase("empty Transfer-Encoding", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding:\r\n\r\n", .invalidTransferEncoding),
    MalformedCase("Transfer-Encoding of commas", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: , ,\r\n\r\n", .invalidTransferEncoding),
    MalformedCase("chunked in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding),
    MalformedCase("gzip alone", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip\r\n\r\n", .unsupportedTransferCoding),
    MalformedCase("gzip then chunked", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferCoding),
    MalformedCase("identity", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: identity\r\n\r\n", .unsupportedTransferCoding),
    MalformedCase("chunked with a parameter", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked;q=1\r\n\r\n", .unsupportedTransferCoding),
    MalformedCase("lookalike coding", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: xchunked\r\n\r\n", .unsupportedTransferCoding),
    MalformedCase("quoted chunked", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: \"chunked\"\r\n\r\n", .unsupportedTransferCoding),
    // Host.
    MalformedCase("HTTP/1.1 without Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", .missingHost),
    MalformedCase("two Host fields", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .duplicateHost),
    MalformedCase("two identical Host fields", "GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", .duplicateHost),
]

@Suite("Request parser: malformed requests")
struct MalformedRequestTests {
    @Test("there are at least 60 malformed cases")
    func enoughCases() {
        #expect(malformedRequests.count >= 60)
    }

    @Test("each malformed request fails with its specific error", arguments: malformedRequests)
    func oneShot(_ testCase: MalformedCase) {
        #expect(parseRequest(testCase.message).error == testCase.error)
    }

    @Test("each malformed request fails the same way when fed one byte at a time", arguments: malformedRequests)
    func byteByByte(_ testCase: MalformedCase) {
        let (result, _) = parseRequestByteByByte(testCase.message)
        #expect(result.error == testCase.error)
    }

    @Test("errors map to the documented status codes")
    func statusCodes() {
        #expect(HTTPParseError.requestLineTooLong.statusCode == 414)
        #expect(HTTPParseError.headTooLarge.statusCode == 431)
        #expect(HTTPParseError.tooManyHeaders.statusCode == 431)
        #expect(HTTPParseError.unsupportedTransferCoding.statusCode == 501)
        #expect(HTTPParseError.unsupportedVersion.statusCode == 505)
        #expect(HTTPParseError.unsupportedVersion.status == .httpVersionNotSupported)
        for error in [HTTPParseError.invalidStartLine, .invalidMethod, .missingTarget, .invalidTarget, .invalidVersion,
            .invalidLineEnding, .obsoleteLineFolding, .whitespaceBeforeColon, .invalidHeaderName, .invalidHeaderValue,
            .invalidContentLength, .conflictingContentLength, .contentLengthWithTransferEncoding,
            .invalidTransferEncoding, .missingHost, .duplicateHost]
        {
            #expect(error.statusCode == 400, "\(error)")
        }
        #expect(HTTPParseError.invalidStatusCode.statusCode == 502)
    }

    @Test("machine codes are stable and distinct")
    func codes() {
        let all: [HTTPParseError] = [.requestLineTooLong, .headTooLarge, .tooManyHeaders, .invalidStartLine,
            .invalidMethod, .missingTarget, .invalidTarget, .invalidVersion, .unsupportedVersion, .invalidLineEnding,
            .obsoleteLineFolding, .whitespaceBeforeColon, .invalidHeaderName, .invalidHeaderValue,
            .invalidContentLength, .conflictingContentLength, .contentLengthWithTransferEncoding,
            .invalidTransferEncoding, .unsupportedTransferCoding, .missingHost, .duplicateHost, .invalidStatusCode]
        #expect(Set(all.map(\.code)).count == all.count)
        #expect(HTTPParseError.invalidStartLine.code == "bad_request_line")
        #expect(HTTPParseError.requestLineTooLong.code == "request_line_too_long")
        #expect(HTTPParseError.headTooLarge.description == "head_too_large (431)")
        for error in all {
            #expect(error.code.utf8.allSatisfy { $0 == 0x5F || (0x61...0x7A).contains($0) }, "\(error.code)")
        }
    }
}
