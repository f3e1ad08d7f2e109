// Byte constants and character classes shared by the parsers and serializers.

/// Byte values the codec compares against.
enum ASCII {
    static let tab: UInt8 = 0x09
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let percent: UInt8 = 0x25
    static let plus: UInt8 = 0x2B
    static let comma: UInt8 = 0x2C
    static let slash: UInt8 = 0x2F
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let equals: UInt8 = 0x3D
    static let questionMark: UInt8 = 0x3F
    static let ampersand: UInt8 = 0x26
    static let hash: UInt8 = 0x23
    static let asterisk: UInt8 = 0x2A
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let delete: UInt8 = 0x7F
}

/// The class bits of every byte value, as a table in read-only data.
///
/// Entry `n` is `@` (0x40) plus bit 0 for `tchar`, bit 1 for a request-target byte and bit 2 for a
/// target byte other than `?` (one that cannot end the path). A string
/// literal is used because its bytes are emitted as a constant: no lazily initialised global, no
/// allocation, one load per lookup.
@inline(__always)
private func byteClass(_ byte: UInt8) -> UInt8 {
    let table: StaticString = """
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\
        @GFAGGGGFFGGFGGFGGGGGGGGGGFFFFFB\
        FGGGGGGGGGGGGGGGGGGGGGGGGGGFFFGG\
        GGGGGGGGGGGGGGGGGGGGGGGGGGGFGFG@\
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\
        @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
        """
    return table.utf8Start[Int(byte)]
}

/// True for `tchar` (RFC 9110 §5.6.2): the bytes allowed in methods, header names and codings.
@inline(__always)
func isTokenByte(_ byte: UInt8) -> Bool {
    byteClass(byte) & 1 != 0
}

/// True for bytes allowed inside a field value or reason phrase: HTAB, SP, VCHAR and obs-text.
///
/// Everything else is a control byte (including NUL, bare CR and DEL) and would let a value be
/// read differently by another parser.
@inline(__always)
func isFieldValueByte(_ byte: UInt8) -> Bool {
    (byte >= ASCII.space && byte != ASCII.delete) || byte == ASCII.tab
}

/// True for bytes accepted in a request target: visible ASCII except `#`.
///
/// Controls, space and DEL would split or hide parts of the request line; non-ASCII must be
/// percent-encoded by a conforming client; a fragment is never sent to a server.
@inline(__always)
func isTargetByte(_ byte: UInt8) -> Bool {
    byteClass(byte) & 2 != 0
}

/// True for target bytes that do not end the path: ``isTargetByte(_:)`` except `?`.
@inline(__always)
func isPathByte(_ byte: UInt8) -> Bool {
    byteClass(byte) & 4 != 0
}

/// True for optional whitespace (SP or HTAB).
@inline(__always)
func isWhitespace(_ byte: UInt8) -> Bool {
    byte == ASCII.space || byte == ASCII.tab
}

/// The value of a hexadecimal digit, or `nil`.
@inline(__always)
func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: return byte &- 0x30
    case 0x41...0x46: return byte &- 0x41 &+ 10
    case 0x61...0x66: return byte &- 0x61 &+ 10
    default: return nil
    }
}

/// The uppercase hexadecimal digit for a value 0–15.
@inline(__always)
func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? 0x30 &+ value : 0x41 &+ value &- 10
}

/// Compares `count` bytes at `bytes` with a lowercase ASCII constant, ignoring the case of letters.
///
/// Setting bit 5 lowercases letters. It also maps CR (0x0D) onto `-` (0x2D) and some controls onto
/// digits, which is why callers only pass bytes that already passed a token or field-value check
/// (neither admits them). Eight bytes are compared at a time, the last word overlapping the previous
/// one, so no load reaches past either operand.
@inline(__always)
func equalsLowercase(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ constant: StaticString) -> Bool {
    guard count == constant.utf8CodeUnitCount else { return false }
    let expected = constant.utf8Start
    if count >= 8 {
        let lower: UInt64 = 0x2020_2020_2020_2020
        var index = 0
        while index &+ 8 < count {
            if SWAR.load(bytes, index) | lower != SWAR.load(expected, index) { return false }
            index &+= 8
        }
        return SWAR.load(bytes, count &- 8) | lower == SWAR.load(expected, count &- 8)
    }
    var index = 0
    while index < count {
        if bytes[index] | 0x20 != expected[index] { return false }
        index &+= 1
    }
    return true
}
