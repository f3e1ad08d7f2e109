import Testing

@testable import HTTP1

@Suite("Percent-encoding and query strings")
struct PercentEncodingTests {
    @Test("decoding", arguments: [
        ("/plain/path", "/plain/path"), ("%41%42c", "ABc"), ("%2f%2F", "//"), ("a+b", "a+b"), ("%20", " "),
        ("%e2%82%AC", "€"), ("", ""), ("%25", "%"), ("%7E~", "~~"),
    ])
    func decoding(encoded: String, decoded: String) throws {
        #expect(try PercentEncoding.decode(encoded) == bytes(decoded))
    }

    @Test("decoding to non-UTF-8 bytes")
    func binary() throws {
        #expect(try PercentEncoding.decode("%FF%fe%01") == [0xFF, 0xFE, 0x01])
    }

    @Test("malformed escapes and NUL are rejected", arguments: [
        ("%", PercentDecodingError.malformedEscape), ("%4", .malformedEscape), ("abc%", .malformedEscape),
        ("%zz", .malformedEscape), ("%4g", .malformedEscape), ("%g4", .malformedEscape), ("%%41", .malformedEscape),
        ("%-1", .malformedEscape), ("% 41", .malformedEscape), ("a%00b", .nulByte), ("%00", .nulByte),
    ])
    func malformed(encoded: String, error: PercentDecodingError) {
        #expect(throws: error) { try PercentEncoding.decode(encoded) }
    }

    @Test("a raw NUL is rejected too")
    func rawNul() {
        #expect(throws: PercentDecodingError.nulByte) { try PercentEncoding.decode([0x61, 0x00]) }
    }

    @Test("decoded paths come from the request head")
    func fromHead() throws {
        let head = try #require(parseRequest(bytes("GET /a%2Fb/%E2%82%AC HTTP/1.1\r\nHost: x\r\n\r\n")).value)
        #expect(try head.decodedPath() == bytes("/a/b/€"))
        let bad = try #require(parseRequest(bytes("GET /a%00 HTTP/1.1\r\nHost: x\r\n\r\n")).value)
        #expect(throws: PercentDecodingError.nulByte) { try bad.decodedPath() }
        let malformed = try #require(parseRequest(bytes("GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n")).value)
        #expect(throws: PercentDecodingError.malformedEscape) { try malformed.decodedPath() }
    }

    @Test("encoding keeps unreserved bytes and slash", arguments: [
        ("abcXYZ019-._~", "abcXYZ019-._~"), ("a b", "a%20b"), ("/p/q", "/p/q"), ("€", "%E2%82%AC"),
        ("?#[]@!$&'()*+,;=%", "%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D%25"), ("", ""),
    ])
    func encoding(plain: String, encoded: String) {
        #expect(PercentEncoding.encode(plain) == encoded)
    }

    @Test("encoding a query component escapes slash")
    func encodingSlash() {
        #expect(PercentEncoding.encode("a/b", keepingSlash: false) == "a%2Fb")
        #expect(PercentEncoding.encode([0x00, 0xFF, 0x2F]) == "%00%FF/")
        var buffer = bytes("/x/")
        bytes("y z").withUnsafeBytes { PercentEncoding.append(encoding: $0, into: &buffer) }
        #expect(buffer == bytes("/x/y%20z"))
    }

    @Test("every non-NUL byte survives encode then decode, and the result is a valid target")
    func roundTrip() throws {
        let all = Array(UInt8(1)...UInt8.max)
        let encoded = PercentEncoding.encode(all)
        #expect(encoded.utf8.allSatisfy(isTargetByte))
        #expect(try PercentEncoding.decode(encoded) == all)
        var rng = SplitMix64(seed: 3)
        for _ in 0..<100 {
            let sample = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 1...255, using: &rng) }
            #expect(try PercentEncoding.decode(PercentEncoding.encode(sample, keepingSlash: false)) == sample)
        }
    }

    /// The decoder appends runs of plain bytes whole; this one decodes byte by byte, as the rules say.
    static func referenceDecode(_ encoded: [UInt8]) throws(PercentDecodingError) -> [UInt8] {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var output: [UInt8] = []
        var index = 0
        while index < encoded.count {
            var byte = encoded[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < encoded.count, let high = hex(encoded[index + 1]), let low = hex(encoded[index + 2]) else {
                    throw .malformedEscape
                }
                byte = high << 4 | low
                index += 3
            } else {
                index += 1
            }
            if byte == 0 { throw .nulByte }
            output.append(byte)
        }
        return output
    }

    @Test("the decoder agrees with a byte-by-byte decoder on random input, escapes, pluses and NULs included")
    func agreesWithReference() {
        var rng = SplitMix64(seed: 11)
        let alphabet = bytes("ab/%+09fFgz ") + [0x00, 0xC3, 0xA9]
        for _ in 0..<4000 {
            let input = (0..<Int.random(in: 0...24, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let expected = Result { () throws(PercentDecodingError) in try Self.referenceDecode(input) }
            var prefix = bytes("kept")
            let actual = input.withUnsafeBytes { raw in
                Result { () throws(PercentDecodingError) -> [UInt8] in
                    try PercentEncoding.decode(raw, into: &prefix)
                    return Array(prefix.dropFirst(4))
                }
            }
            switch (expected, actual) {
            case (.success(let e), .success(let a)): #expect(e == a, "\(input)")
            case (.failure(let e), .failure(let a)): #expect(e == a, "\(input)")
            default: Issue.record("\(input): expected \(expected), got \(actual)")
            }
        }
    }

    @Test("query strings", arguments: [
        ("a=1&b=2", [("a", "1"), ("b", "2")]),
        ("a", [("a", "")]),
        ("a=", [("a", "")]),
        ("=v", [("", "v")]),
        ("&&a=1&&", [("a", "1")]),
        ("a=1&a=2", [("a", "1"), ("a", "2")]),
        ("q=hello+world", [("q", "hello+world")]),
        ("type=image/svg+xml", [("type", "image/svg+xml")]),
        ("prefix=a+b&c=%20", [("prefix", "a+b"), ("c", " ")]),
        ("q=1%2B1", [("q", "1+1")]),
        ("a=b=c", [("a", "b=c")]),
        ("pre%66ix=%2Fx%2F", [("prefix", "/x/")]),
        ("", []),
        ("e=%E2%82%AC", [("e", "€")]),
    ] as [(String, [(String, String)])])
    func queries(query: String, expected: [(String, String)]) throws {
        #expect(try QueryItem.parse(query) == expected.map { QueryItem(name: $0.0, value: $0.1) })
    }

    @Test("malformed queries", arguments: [
        ("a=%", PercentDecodingError.malformedEscape), ("%zz=1", .malformedEscape), ("a=%00", .nulByte),
        ("ok=1&bad=%4", .malformedEscape),
    ])
    func malformedQueries(query: String, error: PercentDecodingError) {
        #expect(throws: error) { try QueryItem.parse(query) }
    }

    @Test("query items from a slice that does not start at zero")
    func slices() throws {
        let whole = bytes("/path?x=1&y=2")
        #expect(try QueryItem.parse(whole[6...]) == [QueryItem(name: "x", value: "1"), QueryItem(name: "y", value: "2")])
        #expect(QueryItem(name: "a", value: "b").description == "a=b")
        #expect(PercentDecodingError.nulByte.statusCode == 400)
        #expect(PercentDecodingError.malformedEscape.code == "bad_percent_escape")
    }
}
