import BlobStore
import Foundation
import Testing

/// The strict RFC 8259 validator behind `Blob-Validate: record` (Foundation's parser takes `[1,]`).
@Suite("JSON record validation", .backends)
struct JSONValidatorTests {
    static func verdict(_ bytes: [UInt8]) -> JSONValidator.Failure? {
        bytes.withUnsafeBytes { JSONValidator.violation(in: $0) }
    }

    static func verdict(_ text: String) -> JSONValidator.Failure? { verdict(Array(text.utf8)) }

    @Test("valid documents", arguments: [
        "{}", "[]", " {\"a\" : [1, -2.5e+3, 0, 0.0, 1E5, -0, true, false, null, \"\"]}\n", "42", "\"text\"", "null",
        #"{"a":1,"a":2}"#, #""\u00e9\u20AC\ud83d\ude00 \" \\ \/ \b \f \n \r \t""#, "\"café 日本 🦊\"", "[[[[]]]]",
        "\t\r\n [ ] \t\r\n", "-0.0E-0", "123456789012345678901234567890e999999",
    ])
    func valid(text: String) {
        #expect(Self.verdict(text) == nil, "\(Self.verdict(text).map(String.init(describing:)) ?? "")")
    }

    @Test("invalid documents, with the reason", arguments: [
        ("[1,]", "trailing comma"), (#"{"a":1,}"#, "expected a key"), ("", "empty"), ("  ", "no value"),
        ("\u{FEFF}{}", "byte order mark"), (#""\ud800""#, "low surrogate escape"), (#""\udc00""#, "lone low surrogate"),
        (#""\ud800\u0041""#, "low surrogate escape"), (#""\ud800x""#, "low surrogate escape"), ("01", "leading zero"),
        ("1.", "inside a number"), (".5", "expected a value"), ("1e", "inside a number"), ("+1", "expected a value"),
        ("-", "inside a number"), ("[1 2]", "expected ','"), ("{\"a\" 1}", "expected ':'"), ("{1:2}", "expected a key"),
        ("[1] [2]", "after the document's value"), ("tru", "inside 'true'"), ("nul1", "in 'null'"), ("NaN", "expected a value"),
        ("[1}", "unexpected '}'"), ("{\"a\":1]", "unexpected ']'"), ("[", "unclosed array"), ("{\"a\":", "unclosed object"),
        ("\"abc", "inside a string"), ("\"a\u{1}\"", "control character"), ("\"\\x\"", "invalid escape"),
        ("\"\\u12G4\"", "hex digit"), ("{'a':1}", "expected a key"), ("[1,,2]", "expected a value"), ("//c\n1", "expected a value"),
    ])
    func invalid(text: String, reason: String) {
        let failure = Self.verdict(text)
        #expect(failure?.reason.contains(reason) == true, "\(text): \(failure.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("UTF-8 is checked inside strings: overlong forms, surrogates, values past U+10FFFF and stray bytes are refused")
    func utf8() {
        let quote = UInt8(ascii: "\"")
        for bad: [UInt8] in [[0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xFF], [0xC3]] {
            let failure = Self.verdict([quote] + bad + [quote])
            #expect(failure?.reason.contains("UTF-8") == true, "\(bad): \(failure.map(String.init(describing:)) ?? "accepted")")
        }
        #expect(Self.verdict([quote, 0xF4, 0x8F, 0xBF, 0xBF, quote]) == nil)  // U+10FFFF
        #expect(Self.verdict([0xC3, 0xA9]) != nil)  // non-ASCII outside a string
    }

    @Test("nesting is limited to maximumDepth levels")
    func depth() {
        let limit = JSONValidator.maximumDepth
        #expect(Self.verdict(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)) == nil)
        let failure = Self.verdict(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
        #expect(failure?.reason.contains("deeper than \(limit)") == true)
        #expect(failure?.offset == Int64(limit))
        // Deep nesting is refused without recursion: a million levels cost no stack.
        #expect(Self.verdict(String(repeating: "[", count: 1_000_000)) != nil)
    }

    @Test("the failure says where: byte, line and column")
    func position() throws {
        let failure = try #require(Self.verdict("{\n  \"a\": [1,\n  ]\n}"))
        #expect(failure.offset == 15)
        #expect(failure.line == 3)
        #expect(failure.column == 3)
        #expect(String(describing: failure).hasSuffix("at byte 15 (line 3, column 3)"))
    }

    @Test("fed in pieces, byte by byte, the verdict is the same as in one piece")
    func streaming() {
        for text in [#"{"a":[1,2.5e3,"\ud83d\ude00é"],"b":null}"#, "[1,]", "12", "\"\\ud800\\", "[tru"] {
            let bytes = Array(text.utf8)
            var validator = JSONValidator()
            var failure: JSONValidator.Failure?
            for byte in bytes where failure == nil {
                failure = [byte].withUnsafeBytes { validator.consume($0) }
            }
            #expect((failure ?? validator.finish()) == Self.verdict(bytes), "\(text)")
        }
    }

    @Test("a put with record validation refuses what Foundation's lenient parser takes", arguments: StoreKind.allCases)
    func storeRefusesTrailingCommas(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for text in ["[1,]", #"{"a":1,}"#] {
                let error = await #expect(throws: BlobStoreError.self) {
                    try await store.put(Data(text.utf8), identifier: "r", options: PutOptions(validation: .record))
                }
                guard case .invalidRecord(_, _, let reason) = error else {
                    Issue.record("expected invalidRecord for \(text), got \(String(describing: error))")
                    continue
                }
                #expect(reason.hasPrefix("not valid JSON: "), "\(reason)")
            }
            #expect(try await store.exists("r") == false)
        }
    }
}
