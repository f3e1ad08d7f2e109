/// A strict RFC 8259 JSON validator that reads a document piece by piece, in one pass, keeping
/// only its nesting (at most ``maximumDepth`` bytes) and a few counters: no tree, no strings.
///
/// Foundation's `JSONSerialization` is lenient on Linux (it takes `[1,]` and `{"a":1,}`), and it
/// needs the whole document in memory; this one is exact and bounded. What it accepts:
/// - exactly one JSON value, of any type (a top-level scalar such as `42` or `"a"` is a JSON text
///   under RFC 8259), with optional whitespace (space, tab, LF, CR) around and between tokens;
/// - UTF-8 only, without a byte order mark (RFC 8259 §8.1: JSON exchanged between systems is
///   UTF-8 and must not begin with one); overlong forms, surrogates and bytes past U+10FFFF are refused;
/// - strings without raw control characters (U+0000–U+001F), whose `\u` escapes name Unicode
///   scalars: a high surrogate escape must be followed by a low one, a lone surrogate is refused
///   (such a string cannot be decoded into text);
/// - numbers in the grammar's form (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`), of any size;
/// - duplicate object keys (RFC 8259 says names *should* be unique, not must).
///
/// Not thread-safe; one validator per document.
package struct JSONValidator: Sendable {
    /// The deepest nesting of arrays and objects accepted: a document is a stack of open containers,
    /// and the bound keeps the stack (and any recursive reader of the record) small.
    package static let maximumDepth = 512

    /// Why and where a document is not JSON.
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// Offset of the offending byte from the start of the document (the length, for a document
        /// that ends too early).
        package var offset: Int64
        /// 1-based line (lines end at LF).
        package var line: Int64
        /// 1-based column, in bytes.
        package var column: Int64
        /// What was wrong.
        package var reason: String

        /// The reason and the place, e.g. `unexpected ']' after ',' at byte 3 (line 1, column 4)`.
        package var description: String { "\(reason) at byte \(offset) (line \(line), column \(column))" }
    }

    private enum State: UInt8 {
        /// A value must come (start of the document, after `:`, after `,` in an array).
        case value
        /// Just after `[`: a value or `]`.
        case valueOrArrayEnd
        /// Just after `{`: a key or `}`.
        case keyOrObjectEnd
        /// After `,` in an object: a key.
        case key
        /// After a key: `:`.
        case colon
        /// After a value inside a container: `,` or the container's end.
        case afterValue
        /// After the top-level value: only whitespace.
        case end
        /// Inside a string.
        case string
        /// After `\` in a string.
        case escape
        /// Reading the four hex digits of `\u`.
        case unicodeEscape
        /// After a high-surrogate escape: `\` must follow.
        case lowSurrogateBackslash
        /// After a high-surrogate escape and `\`: `u` must follow.
        case lowSurrogateU
        /// Inside a multi-byte UTF-8 sequence of a string.
        case utf8Continuation
        /// Number: after `-`.
        case minus
        /// Number: after a leading `0`.
        case zero
        /// Number: in integer digits.
        case integer
        /// Number: after `.`.
        case dot
        /// Number: in fraction digits.
        case fraction
        /// Number: after `e`/`E`.
        case exponentMark
        /// Number: after the exponent's sign.
        case exponentSign
        /// Number: in exponent digits.
        case exponent
        /// Inside `true`, `false` or `null`.
        case literal
        /// A failure was reported; everything after is ignored.
        case failed
    }

    private static let objectMark: UInt8 = 0x7B  // {
    private static let arrayMark: UInt8 = 0x5B  // [

    private var state = State.value
    /// Open containers, innermost last: `{` or `[`.
    private var stack: [UInt8] = []
    /// Whether the string being read is an object key (a `:` follows it) rather than a value.
    private var stringIsKey = false
    /// `\u` escape: digits read so far and their value.
    private var hexCount = 0
    private var codeUnit: UInt32 = 0
    /// Whether the `\u` escape being read must be a low surrogate (it follows a high one).
    private var expectingLowSurrogate = false
    /// UTF-8: continuation bytes still due, and the allowed range of the next one.
    private var continuationsLeft = 0
    private var continuationLow: UInt8 = 0x80
    private var continuationHigh: UInt8 = 0xBF
    /// The literal being matched and how many of its bytes were seen.
    private var literal: StaticString = "null"
    private var literalIndex = 0
    /// Position of the next byte.
    private var offset: Int64 = 0
    private var line: Int64 = 1
    private var lineStart: Int64 = 0
    private var failure: Failure?

    /// A validator at the start of a document.
    package init() {}

    /// Checks a whole document.
    package static func violation(in document: UnsafeRawBufferPointer) -> Failure? {
        var validator = JSONValidator()
        if let failure = validator.consume(document) { return failure }
        return validator.finish()
    }

    /// Reads the next bytes of the document; returns the failure as soon as one is found (and the
    /// same failure on every later call).
    @discardableResult
    package mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Failure? {
        if let failure { return failure }
        for byte in bytes {
            step(byte)
            if state == .failed { return failure }
            offset &+= 1
            if byte == 0x0A {
                line &+= 1
                lineStart = offset
            }
        }
        return nil
    }

    /// Ends the document: `nil` when the bytes read form exactly one JSON value.
    package mutating func finish() -> Failure? {
        if let failure { return failure }
        switch state {
        case .end:
            return nil
        case .zero, .integer, .fraction, .exponent:
            if stack.isEmpty { return nil }  // a top-level number ends with the document
            fail("the document ends inside an unclosed \(containerName)")
        case .value, .valueOrArrayEnd, .keyOrObjectEnd, .key, .colon, .afterValue:
            if stack.isEmpty {
                fail(offset == 0 ? "the document is empty" : "the document has no value (only whitespace)")
            } else {
                fail("the document ends inside an unclosed \(containerName)")
            }
        case .string, .escape, .unicodeEscape, .lowSurrogateBackslash, .lowSurrogateU, .utf8Continuation:
            fail("the document ends inside a string")
        case .minus, .dot, .exponentMark, .exponentSign:
            fail("the document ends inside a number")
        case .literal:
            fail("the document ends inside '\(literal)'")
        case .failed:
            break
        }
        return failure
    }

    // MARK: The machine

    private mutating func fail(_ reason: String) {
        failure = Failure(offset: offset, line: line, column: offset - lineStart + 1, reason: reason)
        state = .failed
    }

    /// The innermost open container, as a word.
    private var containerName: String { stack.last == JSONValidator.objectMark ? "object" : "array" }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }

    /// How a byte reads in a message: printable ASCII as itself, anything else in hex.
    private static func show(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" : "")\(hex)"
    }

    private mutating func step(_ byte: UInt8) {
        switch state {
        case .string:
            stringByte(byte)
        case .value, .valueOrArrayEnd:
            if JSONValidator.isWhitespace(byte) { return }
            if byte == 0x5D, state == .valueOrArrayEnd {  // ]
                closeContainer(byte)
                return
            }
            startValue(byte)
        case .keyOrObjectEnd, .key:
            if JSONValidator.isWhitespace(byte) { return }
            if byte == 0x22 {  // "
                stringIsKey = true
                state = .string
            } else if byte == 0x7D, state == .keyOrObjectEnd {  // }
                closeContainer(byte)
            } else {
                fail("expected \(state == .key ? "a key (a string) after ','" : "a key (a string) or '}'"), found \(JSONValidator.show(byte))")
            }
        case .colon:
            if JSONValidator.isWhitespace(byte) { return }
            if byte == 0x3A { state = .value } else { fail("expected ':' after a key, found \(JSONValidator.show(byte))") }
        case .afterValue:
            afterValue(byte)
        case .end:
            if !JSONValidator.isWhitespace(byte) { fail("unexpected \(JSONValidator.show(byte)) after the document's value") }
        case .escape:
            switch byte {
            case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:  // " \ / b f n r t
                state = .string
            case 0x75:  // u
                startUnicodeEscape()
            default:
                fail("invalid escape in a string: '\\' followed by \(JSONValidator.show(byte))")
            }
        case .unicodeEscape:
            unicodeEscapeDigit(byte)
        case .lowSurrogateBackslash:
            if byte == 0x5C { state = .lowSurrogateU } else { fail("a high surrogate escape (\\uD800–\\uDBFF) must be followed by a low surrogate escape") }
        case .lowSurrogateU:
            if byte == 0x75 { startUnicodeEscape() } else { fail("a high surrogate escape (\\uD800–\\uDBFF) must be followed by a low surrogate escape") }
        case .utf8Continuation:
            guard byte >= continuationLow && byte <= continuationHigh else {
                fail("invalid UTF-8 (\(JSONValidator.show(byte)) cannot continue the sequence)")
                return
            }
            continuationLow = 0x80
            continuationHigh = 0xBF
            continuationsLeft -= 1
            if continuationsLeft == 0 { state = .string }
        case .minus:
            if byte == 0x30 {
                state = .zero
            } else if JSONValidator.isDigit(byte) {
                state = .integer
            } else {
                fail("expected a digit after '-', found \(JSONValidator.show(byte))")
            }
        case .zero:
            numberAfterInteger(byte, leadingZero: true)
        case .integer:
            if !JSONValidator.isDigit(byte) { numberAfterInteger(byte, leadingZero: false) }
        case .dot:
            if JSONValidator.isDigit(byte) { state = .fraction } else { fail("expected a digit after '.', found \(JSONValidator.show(byte))") }
        case .fraction:
            if JSONValidator.isDigit(byte) { return }
            if byte == 0x65 || byte == 0x45 { state = .exponentMark } else { endNumber(byte) }
        case .exponentMark:
            if byte == 0x2B || byte == 0x2D {
                state = .exponentSign
            } else if JSONValidator.isDigit(byte) {
                state = .exponent
            } else {
                fail("expected a digit or sign in an exponent, found \(JSONValidator.show(byte))")
            }
        case .exponentSign:
            if JSONValidator.isDigit(byte) { state = .exponent } else { fail("expected a digit in an exponent, found \(JSONValidator.show(byte))") }
        case .exponent:
            if !JSONValidator.isDigit(byte) { endNumber(byte) }
        case .literal:
            guard byte == literal.utf8Start[literalIndex] else {
                fail("unexpected \(JSONValidator.show(byte)) in '\(literal)'")
                return
            }
            literalIndex += 1
            if literalIndex == literal.utf8CodeUnitCount { valueEnded() }
        case .failed:
            break
        }
    }

    private mutating func startValue(_ byte: UInt8) {
        switch byte {
        case 0x22:  // "
            stringIsKey = false
            state = .string
        case 0x7B, 0x5B:  // { [
            guard stack.count < JSONValidator.maximumDepth else {
                fail("arrays and objects nest deeper than \(JSONValidator.maximumDepth) levels")
                return
            }
            stack.append(byte)
            state = byte == 0x7B ? .keyOrObjectEnd : .valueOrArrayEnd
        case 0x2D: state = .minus
        case 0x30: state = .zero
        case 0x31...0x39: state = .integer
        case 0x74: startLiteral("true")
        case 0x66: startLiteral("false")
        case 0x6E: startLiteral("null")
        case 0xEF where offset == 0:
            fail("the document starts with a byte order mark (JSON text is UTF-8 without one)")
        case 0x5D where state == .value && stack.last == JSONValidator.arrayMark:
            fail("unexpected ']' after ',' (a trailing comma)")
        case 0x7D where state == .value && stack.last == JSONValidator.objectMark:
            fail("expected a value after ':', found '}'")
        default:
            fail("expected a value, found \(JSONValidator.show(byte))")
        }
    }

    private mutating func startLiteral(_ text: StaticString) {
        literal = text
        literalIndex = 1
        state = .literal
    }

    private mutating func afterValue(_ byte: UInt8) {
        if JSONValidator.isWhitespace(byte) { return }
        if byte == 0x2C {  // ,
            state = stack.last == JSONValidator.objectMark ? .key : .value
        } else if byte == 0x5D || byte == 0x7D {
            closeContainer(byte)
        } else {
            fail("expected ',' or '\(stack.last == JSONValidator.objectMark ? "}" : "]")', found \(JSONValidator.show(byte))")
        }
    }

    private mutating func closeContainer(_ byte: UInt8) {
        let expected: UInt8 = byte == 0x5D ? JSONValidator.arrayMark : JSONValidator.objectMark
        guard stack.last == expected else {
            fail("unexpected \(JSONValidator.show(byte)) inside an \(containerName)")
            return
        }
        stack.removeLast()
        valueEnded()
    }

    private mutating func valueEnded() {
        state = stack.isEmpty ? .end : .afterValue
    }

    private mutating func numberAfterInteger(_ byte: UInt8, leadingZero: Bool) {
        if byte == 0x2E {
            state = .dot
        } else if byte == 0x65 || byte == 0x45 {
            state = .exponentMark
        } else if leadingZero && JSONValidator.isDigit(byte) {
            fail("a number must not have a leading zero")
        } else {
            endNumber(byte)
        }
    }

    /// A number ended at `byte`, which belongs to what follows it.
    private mutating func endNumber(_ byte: UInt8) {
        valueEnded()
        if state == .end {
            if !JSONValidator.isWhitespace(byte) { fail("unexpected \(JSONValidator.show(byte)) after the document's value") }
        } else {
            afterValue(byte)
        }
    }

    private mutating func stringByte(_ byte: UInt8) {
        switch byte {
        case 0x22:  // "
            if stringIsKey { state = .colon } else { valueEnded() }
        case 0x5C:  // \
            state = .escape
        case 0x00..<0x20:
            fail("a raw control character (\(JSONValidator.show(byte))) in a string; escape it")
        case 0x20..<0x80:
            break
        case 0xC2...0xDF:
            expectContinuations(1, low: 0x80, high: 0xBF)
        case 0xE0:
            expectContinuations(2, low: 0xA0, high: 0xBF)  // no overlong forms
        case 0xED:
            expectContinuations(2, low: 0x80, high: 0x9F)  // no surrogates
        case 0xE1...0xEF:
            expectContinuations(2, low: 0x80, high: 0xBF)
        case 0xF0:
            expectContinuations(3, low: 0x90, high: 0xBF)  // no overlong forms
        case 0xF4:
            expectContinuations(3, low: 0x80, high: 0x8F)  // nothing past U+10FFFF
        case 0xF1...0xF3:
            expectContinuations(3, low: 0x80, high: 0xBF)
        default:
            fail("invalid UTF-8 (\(JSONValidator.show(byte)) cannot start a character)")
        }
    }

    private mutating func expectContinuations(_ count: Int, low: UInt8, high: UInt8) {
        continuationsLeft = count
        continuationLow = low
        continuationHigh = high
        state = .utf8Continuation
    }

    private mutating func startUnicodeEscape() {
        hexCount = 0
        codeUnit = 0
        state = .unicodeEscape
    }

    private mutating func unicodeEscapeDigit(_ byte: UInt8) {
        guard let digit = JSONValidator.hexValue(byte) else {
            fail("expected a hex digit in a \\u escape, found \(JSONValidator.show(byte))")
            return
        }
        codeUnit = codeUnit << 4 | digit
        hexCount += 1
        guard hexCount == 4 else { return }
        let isHigh = (0xD800...0xDBFF).contains(codeUnit), isLow = (0xDC00...0xDFFF).contains(codeUnit)
        if expectingLowSurrogate {
            expectingLowSurrogate = false
            if !isLow {
                fail("a high surrogate escape (\\uD800–\\uDBFF) must be followed by a low surrogate escape")
                return
            }
            state = .string
        } else if isHigh {
            expectingLowSurrogate = true
            state = .lowSurrogateBackslash
        } else if isLow {
            fail("a lone low surrogate escape (\\uDC00–\\uDFFF) in a string")
        } else {
            state = .string
        }
    }
}
