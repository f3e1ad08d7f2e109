import Testing

@testable import HTTP1

@Suite("Header fields")
struct HeadersTests {
    @Test("lookup ignores case, by known and by arbitrary name")
    func lookup() {
        var headers = HTTPHeaders()
        headers.append(name: "content-TYPE", value: "text/plain")
        headers.append(name: "X-Thing", value: "one")
        headers.append(name: "x-thing", value: "two")
        #expect(headers.first(.contentType) == "text/plain")
        #expect(headers[.contentType] == "text/plain")
        #expect(headers["Content-Type"] == "text/plain")
        #expect(headers["X-THING"] == "one")
        #expect(headers.values(name: "x-thing") == ["one", "two"])
        #expect(headers.contains(name: "x-Thing"))
        #expect(!headers.contains(name: "x-thin"))
        #expect(!headers.contains(.etag))
        #expect(headers.knownName(at: 0) == .contentType)
        #expect(headers.knownName(at: 1) == nil)
        #expect(headers.name(at: 0) == "content-TYPE")
        #expect(headers.firstIndex(of: "X-Thing") == 1)
    }

    @Test("several fields with one known name")
    func repeatedKnown() throws {
        let head = try #require(parseRequest(bytes(
            "GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"a\"\r\nif-none-match: \"b\", \"c\"\r\n\r\n")).value)
        #expect(head.ifNoneMatch == "\"a\"")
        #expect(head.headers.values(.ifNoneMatch) == ["\"a\"", "\"b\", \"c\""])
        #expect(head.headers.values(name: "IF-NONE-MATCH") == ["\"a\"", "\"b\", \"c\""])
    }

    @Test("remove and set")
    func removeAndSet() {
        var headers: HTTPHeaders = ["A": "1", "Content-Length": "5", "a": "2", "B": "3"]
        headers.remove(name: "a")
        #expect(headers.map(\.name) == ["Content-Length", "B"])
        headers.set(.contentLength, value: "7")
        #expect(headers.values(.contentLength) == ["7"])
        headers.set(name: "b", value: "4")
        #expect(headers.map(\.value) == ["7", "4"])
        headers.remove(name: "content-length")
        #expect(headers.count == 1)
        headers.remove(.host)
        #expect(headers.count == 1)
    }

    @Test("every known name classifies in any case, and near misses do not")
    func knownNames() {
        for known in KnownHeader.allCases {
            let name = "\(known.name)"
            #expect(HTTPHeaders.knownHeader(named: name) == known)
            #expect(HTTPHeaders.knownHeader(named: name.uppercased()) == known)
            #expect(HTTPHeaders.knownHeader(named: name.lowercased()) == known)
            #expect(HTTPHeaders.knownHeader(named: name + "x") == nil)
            #expect(HTTPHeaders.knownHeader(named: String(name.dropLast()) + "_") == nil)
        }
        #expect(HTTPHeaders.knownHeader(named: "Content\u{D}Length") == nil)
    }

    @Test("equality: names ignore case, values and order do not")
    func equality() {
        let a: HTTPHeaders = ["Host": "x", "ETag": "1"]
        #expect(a == ["host": "x", "etag": "1"])
        #expect(a != ["Host": "X", "ETag": "1"])
        #expect(a != ["ETag": "1", "Host": "x"])
        #expect(a != ["Host": "x"])
    }

    @Test("values are trimmed and sanitized when appended")
    func sanitizing() {
        var headers = HTTPHeaders()
        headers.append(name: "A", value: " \t spaced \t ")
        headers.append(name: "B", value: "line\r\nbreak")
        headers.append(name: "C", value: "\r\n")
        headers.append(.contentLength, value: 42)
        #expect(headers.map(\.value) == ["spaced", "line  break", "", "42"])
        #expect(headers.description == "A: spaced\nB: line  break\nC: \nContent-Length: 42")
    }

    @Test("field lines of random values match the rule applied byte by byte (the check runs eight bytes at a time)")
    func fieldLinesMatchTheRule() {
        func reference(_ value: [UInt8]) -> [UInt8] {
            func allowed(_ byte: UInt8) -> Bool { (byte >= 0x20 && byte != 0x7F) || byte == 0x09 }
            func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || !allowed(byte) }
            var slice = value[...]
            while let first = slice.first, blank(first) { slice = slice.dropFirst() }
            while let last = slice.last, blank(last) { slice = slice.dropLast() }
            return Array("X-Value: ".utf8) + slice.map { allowed($0) ? $0 : 0x20 } + [0x0D, 0x0A]
        }
        var rng = SplitMix64(seed: 5)
        let alphabet: [UInt8] = [0x41, 0x7A, 0x20, 0x09, 0x00, 0x0D, 0x0A, 0x1F, 0x7F, 0x7E, 0x80, 0xFF, 0x30]
        for round in 0..<5000 {
            // Mostly plain values (the fast path), some with one odd byte anywhere.
            var value = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet[Int.random(in: 0...3, using: &rng) == 0 ? 1 : 0] }
            if round % 2 == 0, !value.isEmpty { value[Int.random(in: 0..<value.count, using: &rng)] = alphabet.randomElement(using: &rng)! }
            var line: [UInt8] = []
            Array("X-Value".utf8).withUnsafeBufferPointer { name in
                value.withUnsafeBufferPointer { line.appendFieldLine(name: name, value: $0) }
            }
            #expect(line == reference(value), "\(value)")
        }
    }

    @Test("numeric values")
    func numbers() {
        var headers = HTTPHeaders()
        headers.append(.contentLength, value: 0)
        headers.append(.contentLength, value: Int64.max)
        #expect(headers.values(.contentLength) == ["0", "9223372036854775807"])
    }
}

@Suite("Byte classes")
struct ByteClassTests {
    @Test("token bytes match RFC 9110 tchar exactly")
    func tokens() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(isTokenByte(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test("field value bytes: HTAB, SP, VCHAR, obs-text")
    func fieldValues() {
        for byte in UInt8.min...UInt8.max {
            let expected = byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
            #expect(isFieldValueByte(byte) == expected, "byte \(byte)")
        }
    }

    @Test("target bytes: visible ASCII except #")
    func targets() {
        for byte in UInt8.min...UInt8.max {
            let expected = (0x21...0x7E).contains(byte) && byte != 0x23
            #expect(isTargetByte(byte) == expected, "byte \(byte)")
        }
    }

    @Test("hex digits")
    func hex() {
        for byte in UInt8.min...UInt8.max {
            let expected = UInt8(String(UnicodeScalar(byte)), radix: 16)
            #expect(hexValue(byte) == expected, "byte \(byte)")
        }
        #expect((0..<16).map { hexDigit(UInt8($0)) } == Array("0123456789ABCDEF".utf8))
    }

    @Test("statuses")
    func statuses() {
        #expect(HTTPStatus.ok.description == "200 OK")
        #expect(HTTPStatus.continue.isInformational)
        #expect(!HTTPStatus.ok.isInformational)
        #expect(HTTPStatus(code: 299).reasonPhrase == "")
        #expect(HTTPStatus.httpVersionNotSupported.reasonPhrase == "HTTP Version Not Supported")
        #expect(HTTPVersion.http1_1.description == "HTTP/1.1")
    }
}

@Suite("Case-insensitive comparison")
struct EqualsLowercaseTests {
    @Test("every length from 1 to 24, matching and differing at every position")
    func lengths() {
        let alphabet = Array("abcdefghijklmnopqrstuvwx-".utf8)
        let constants: [StaticString] = [
            "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghij",
            "abcdefghijk", "abcdefghijkl", "abcdefghijklm", "abcdefghijklmn", "abcdefghijklmno",
            "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnopqr", "abcdefghijklmnopqrs",
            "abcdefghijklmnopqrst", "abcdefghijklmnopqrstu", "abcdefghijklmnopqrstuv",
            "abcdefghijklmnopqrstuvw", "abcdefghijklmnopqrstuvwx",
        ]
        for constant in constants {
            let count = constant.utf8CodeUnitCount
            let same = Array(alphabet.prefix(count))
            let upper = same.map { $0 & ~0x20 }
            same.withUnsafeBufferPointer { #expect(equalsLowercase($0.baseAddress!, count, constant)) }
            upper.withUnsafeBufferPointer { #expect(equalsLowercase($0.baseAddress!, count, constant)) }
            for position in 0..<count {
                var different = upper
                different[position] = 0x2D
                different.withUnsafeBufferPointer { #expect(!equalsLowercase($0.baseAddress!, count, constant)) }
            }
            (same + [0x61]).withUnsafeBufferPointer { #expect(!equalsLowercase($0.baseAddress!, count + 1, constant)) }
        }
    }

    @Test("path bytes are target bytes except ?")
    func pathBytes() {
        for byte in UInt8.min...UInt8.max {
            #expect(isPathByte(byte) == (isTargetByte(byte) && byte != 0x3F), "byte \(byte)")
        }
    }
}
