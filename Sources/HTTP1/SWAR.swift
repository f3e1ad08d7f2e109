// Eight bytes at a time ("SIMD within a register"): the scans that dominate head parsing test a
// whole word per step instead of a byte, without any dependency beyond the standard library.

enum SWAR {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The word at `offset`, read as little-endian bytes in memory order.
    @inline(__always)
    static func load(_ bytes: UnsafePointer<UInt8>, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(bytes + offset).loadUnaligned(as: UInt64.self))
    }

    /// A mask with the high bit set in the lowest byte of `word` equal to `byte` (and possibly in
    /// higher bytes too, through borrows): only the lowest set bit is exact.
    @inline(__always)
    static func matches(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let x = word ^ (ones &* UInt64(byte))
        return (x &- ones) & ~x & highBits
    }

    /// A mask flagging bytes below 0x20 or equal to 0x7F: the control bytes a field value may not
    /// hold (HTAB is flagged too and sorted out by the caller). Bytes ≥ 0x80 are never flagged.
    @inline(__always)
    static func controls(_ word: UInt64) -> UInt64 {
        let below = (word &- ones &* 0x20) & ~word & highBits
        return below | matches(word, ASCII.delete)
    }

    /// Index (0–7) of the byte flagged by the lowest set bit of a non-zero mask.
    @inline(__always)
    static func firstByte(_ mask: UInt64) -> Int {
        mask.trailingZeroBitCount &>> 3
    }
}
