/// Writes fixed-width ASCII fields left to right into a buffer of known size.
struct DigitWriter {
    let out: UnsafeMutableBufferPointer<UInt8>
    var position = 0

    init(_ out: UnsafeMutableBufferPointer<UInt8>) { self.out = out }

    mutating func literal(_ byte: UInt8) {
        out[position] = byte
        position += 1
    }

    mutating func digit(_ value: Int) { literal(0x30 &+ UInt8(truncatingIfNeeded: value)) }

    mutating func two(_ value: Int) {
        digit(value / 10)
        digit(value % 10)
    }

    /// A year as four digits; years outside 0…9999 (never produced by the store) are clamped.
    mutating func four(_ value: Int64) {
        let year = Int(min(max(value, 0), 9999))
        two(year / 100)
        two(year % 100)
    }

    mutating func time(_ secondOfDay: Int) {
        two(secondOfDay / 3600)
        literal(0x3A)  // :
        two(secondOfDay / 60 % 60)
        literal(0x3A)
        two(secondOfDay % 60)
    }

    /// The three-letter name at `index` in a table of concatenated names.
    mutating func name(_ table: StaticString, index: Int) {
        let base = table.utf8Start + index * 3
        literal(base[0])
        literal(base[1])
        literal(base[2])
    }
}
