/// The decimal digits of a non-negative integer, written into a caller's buffer: for paths built
/// without `String` on hot paths (a blob's bucket folder, a descriptor's `/proc/self/fd` link).
package enum DecimalDigits {
    /// How many digits `value` (≥ 0) has.
    package static func count(_ value: Int) -> Int {
        precondition(value >= 0, "DecimalDigits takes non-negative values")
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits
    }

    /// Writes the digits of `value` (≥ 0) from `start`, which has room for ``count(_:)`` bytes;
    /// returns how many were written.
    @discardableResult
    package static func write(_ value: Int, to start: UnsafeMutablePointer<UInt8>) -> Int {
        let digits = count(value)
        var rest = value
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            start[offset] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return digits
    }
}
