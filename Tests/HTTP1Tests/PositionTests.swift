import Testing

@testable import HTTP1

/// The parsers skip ordinary bytes eight at a time; these tests put the interesting byte at every
/// offset so each lane of a word, and the byte-at-a-time tail, is exercised.
@Suite("Bytes at every position")
struct PositionTests {
    static let value = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"

    func request(value: String, extra: String = "") -> [UInt8] {
        bytes("GET / HTTP/1.1\r\nHost: x\r\nX-Long: \(value)\r\n\(extra)\r\n")
    }

    @Test("a long value parses intact, whatever its length")
    func lengths() throws {
        for length in 0...Self.value.count {
            let value = String(Self.value.prefix(length))
            let head = try #require(parseRequest(request(value: value)).value)
            #expect(head.headers["x-long"] == value)
        }
    }

    @Test("a control byte anywhere in a value is rejected", arguments: [0x00, 0x01, 0x0B, 0x1F, 0x7F] as [UInt8])
    func controlAnywhere(control: UInt8) {
        let base = bytes(Self.value)
        for position in 0..<base.count {
            var value = base
            value[position] = control
            let message = bytes("GET / HTTP/1.1\r\nHost: x\r\nX-Long: ") + value + bytes("\r\n\r\n")
            #expect(parseRequest(message).error == .invalidHeaderValue, "at \(position)")
        }
    }

    @Test("a tab or obs-text byte anywhere inside a value is kept")
    func tabAnywhere() throws {
        let base = bytes(Self.value)
        for replacement in [0x09, 0x80, 0xFF] as [UInt8] {
            for position in 1..<base.count - 1 {
                var value = base
                value[position] = replacement
                let message = bytes("GET / HTTP/1.1\r\nHost: x\r\nX-Long: ") + value + bytes("\r\n\r\n")
                let head = try #require(parseRequest(message).value, "at \(position)")
                #expect(Array(head.headers.valueBytes(at: 1)) == value, "at \(position)")
            }
        }
    }

    @Test("a bare LF or bare CR anywhere is rejected")
    func lineEndingsAnywhere() {
        let message = request(value: Self.value, extra: "X-Other: something long enough\r\n")
        for position in message.indices where message[position] != 0x0D && message[position] != 0x0A {
            for bad in [0x0A, 0x0D] as [UInt8] {
                var broken = message
                broken[position] = bad
                let error = parseRequest(broken).error
                let (incremental, _) = parseRequestByteByByte(broken)
                if bad == 0x0A {
                    #expect(error == .invalidLineEnding, "LF at \(position)")
                    #expect(incremental.error == .invalidLineEnding, "LF at \(position)")
                } else {
                    // A CR inside the method or version can also read as a malformed request line,
                    // but never as a valid request.
                    #expect(error != nil, "CR at \(position)")
                    #expect(incremental.error == error, "CR at \(position)")
                }
            }
        }
    }

    @Test("the end of the head is found whatever its alignment")
    func alignment() throws {
        for padding in 0..<24 {
            let message = bytes("GET /\(String(repeating: "p", count: padding)) HTTP/1.1\r\nHost: x\r\n\r\n")
            let result = parseRequest(message + bytes("NEXT"))
            #expect(result.consumed == message.count, "padding \(padding)")
        }
    }
}
