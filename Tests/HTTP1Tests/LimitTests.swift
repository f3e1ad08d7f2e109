import Testing

@testable import HTTP1

@Suite("Head limits: exactly at the limit passes, one past fails")
struct LimitTests {
    /// A request line of exactly `length` bytes (without CR LF).
    func requestLine(length: Int) -> String {
        let fixed = "GET / HTTP/1.1".utf8.count
        return "GET /" + String(repeating: "a", count: length - fixed) + " HTTP/1.1"
    }

    /// A complete head of exactly `size` bytes, with a filler field sized to fit.
    func head(size: Int) -> [UInt8] {
        let prefix = "GET / HTTP/1.1\r\nHost: x\r\nX-Fill: "
        let suffix = "\r\n\r\n"
        let fill = size - prefix.utf8.count - suffix.utf8.count
        return bytes(prefix + String(repeating: "f", count: fill) + suffix)
    }

    /// A head with `count` field lines.
    func head(fieldCount: Int) -> [UInt8] {
        var text = "GET / HTTP/1.1\r\nHost: x\r\n"
        for index in 1..<fieldCount { text += "X-\(index): v\r\n" }
        return bytes(text + "\r\n")
    }

    @Test("defaults")
    func defaults() {
        let limits = HTTPHeadLimits()
        #expect(limits.maxStartLineLength == 8192)
        #expect(limits.maxHeadSize == 65536)
        #expect(limits.maxHeaderCount == 100)
    }

    @Test("request line of exactly 8 KiB is accepted")
    func requestLineAtLimit() {
        let message = bytes(requestLine(length: 8192) + "\r\nHost: x\r\n\r\n")
        #expect(parseRequest(message).value?.target.utf8.count == 8192 - 13)
        #expect(parseRequestByteByByte(message).result.value != nil)
    }

    @Test("request line of 8 KiB + 1 is 414")
    func requestLineOverLimit() {
        let message = bytes(requestLine(length: 8193) + "\r\nHost: x\r\n\r\n")
        #expect(parseRequest(message).error == .requestLineTooLong)
        let (result, at) = parseRequestByteByByte(message)
        #expect(result.error == .requestLineTooLong)
        #expect(at <= 8193 + 2, "rejected as soon as the line is known to be too long")
    }

    @Test("an over-long request line ending in a bare LF is 414 whole, split, or byte by byte")
    func overLongRequestLineWithBareLineFeed() {
        // Found by fuzzing: the ending was judged before the length when the line arrived in one read.
        for length in [8193, 8194, 9000] {
            let message = bytes(requestLine(length: length) + "\nHost: x\r\n\r\n")
            #expect(parseRequest(message).error == .requestLineTooLong, "length \(length), whole")
            #expect(parseRequestByteByByte(message).result.error == .requestLineTooLong, "length \(length), byte by byte")
            for cut in [100, 8000, length - 1, length] {
                var parser = HTTPRequestParser()
                let first = message.withUnsafeBytes { parser.parse(UnsafeRawBufferPointer(rebasing: $0[..<cut])) }
                let outcome = first.isNeedMore ? parser.parse(message) : first
                #expect(outcome.error == .requestLineTooLong, "length \(length), cut at \(cut)")
            }
        }
        // At the limit, a bare LF is still the line-ending error it always was.
        let atLimit = bytes(requestLine(length: 8192) + "\nHost: x\r\n\r\n")
        #expect(parseRequest(atLimit).error == .invalidLineEnding)
    }

    @Test("a request line with no end is rejected once it is too long, not when the head limit hits")
    func endlessRequestLine() {
        let message = bytes("GET /" + String(repeating: "a", count: 9000))
        #expect(parseRequest(message).error == .requestLineTooLong)
        let fits = bytes("GET /" + String(repeating: "a", count: 8000))
        #expect(parseRequest(fits).isNeedMore)
    }

    @Test("head of exactly 64 KiB is accepted")
    func headAtLimit() {
        let message = head(size: 65536)
        #expect(message.count == 65536)
        let result = parseRequest(message)
        #expect(result.consumed == 65536)
        var parser = HTTPRequestParser()
        var rng = SplitMix64(seed: 7)
        let (split, _) = feedPrefixes(message, ends: randomCuts(count: message.count, pieces: 40, using: &rng)) {
            parser.parse($0)
        }
        #expect(split == result)
    }

    @Test("head of 64 KiB + 1 is 431")
    func headOverLimit() {
        let message = head(size: 65537)
        #expect(parseRequest(message).error == .headTooLarge)
        var parser = HTTPRequestParser()
        let (result, at) = feedPrefixes(message, ends: Array(stride(from: 0, to: message.count, by: 1000))) {
            parser.parse($0)
        }
        #expect(result.error == .headTooLarge)
        #expect(at == message.count)
    }

    @Test("a head with no end is rejected once it reaches the limit")
    func endlessHead() {
        let almost = head(size: 65536).dropLast(4)
        #expect(parseRequest(Array(almost)).isNeedMore)
        let full = Array(almost) + bytes("fffff")
        #expect(full.count > 65536)
        #expect(parseRequest(full).error == .headTooLarge)
    }

    @Test("exactly 100 fields are accepted")
    func fieldsAtLimit() {
        let result = parseRequest(head(fieldCount: 100))
        #expect(result.value?.headers.count == 100)
        #expect(parseRequestByteByByte(head(fieldCount: 100)).result == result)
    }

    @Test("101 fields are 431")
    func fieldsOverLimit() {
        #expect(parseRequest(head(fieldCount: 101)).error == .tooManyHeaders)
        #expect(parseRequestByteByByte(head(fieldCount: 101)).result.error == .tooManyHeaders)
    }

    @Test("custom limits apply exactly", arguments: [1, 2, 10, 37])
    func customLimits(limit: Int) {
        let fields = HTTPHeadLimits(maxHeaderCount: limit)
        #expect(parseRequest(head(fieldCount: limit), limits: fields).value != nil)
        #expect(parseRequest(head(fieldCount: limit + 1), limits: fields).error == .tooManyHeaders)

        let lineLimit = 20 + limit
        let line = HTTPHeadLimits(maxStartLineLength: lineLimit)
        #expect(parseRequest(bytes(requestLine(length: lineLimit) + "\r\nHost: x\r\n\r\n"), limits: line).value != nil)
        #expect(parseRequest(bytes(requestLine(length: lineLimit + 1) + "\r\nHost: x\r\n\r\n"), limits: line).error
            == .requestLineTooLong)

        let sizeLimit = 100 + limit
        let size = HTTPHeadLimits(maxHeadSize: sizeLimit)
        #expect(parseRequest(head(size: sizeLimit), limits: size).consumed == sizeLimit)
        #expect(parseRequest(head(size: sizeLimit + 1), limits: size).error == .headTooLarge)
    }

    @Test("zero fields allowed means only a field-less head passes")
    func zeroFields() {
        let none = HTTPHeadLimits(maxHeaderCount: 0)
        #expect(parseRequest(bytes("GET / HTTP/1.0\r\n\r\n"), limits: none).value != nil)
        #expect(parseRequest(bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), limits: none).error == .tooManyHeaders)
    }

    @Test("empty lines before the request line count towards the head limit")
    func leadingLinesCount() {
        let limits = HTTPHeadLimits(maxHeadSize: 64)
        let endless = bytes(String(repeating: "\r\n", count: 40))
        #expect(parseRequest(endless, limits: limits).error == .headTooLarge)
    }
}
