#if canImport(Glibc)
import Glibc
#endif

/// Appends the current time as RFC 3339 UTC with milliseconds (`2026-11-24T10:00:00.123Z`) to a
/// byte buffer. The calendar part is computed once a second: the access log stamps every request,
/// and `gmtime_r` (or any Foundation formatter) per request would cost more than the rest of the line.
///
/// Not shared: each event loop owns one (it is a value with a cache).
struct LogTimestamp {
    private var second = Int.min
    private var prefix: [UInt8] = []

    /// Appends the time now.
    mutating func append(into out: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let seconds = Int(now.tv_sec)
        if seconds != second {
            second = seconds
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            prefix.removeAll(keepingCapacity: true)
            LogTimestamp.digits(Int(parts.tm_year) + 1900, width: 4, into: &prefix)
            prefix.append(UInt8(ascii: "-"))
            LogTimestamp.digits(Int(parts.tm_mon) + 1, width: 2, into: &prefix)
            prefix.append(UInt8(ascii: "-"))
            LogTimestamp.digits(Int(parts.tm_mday), width: 2, into: &prefix)
            prefix.append(UInt8(ascii: "T"))
            LogTimestamp.digits(Int(parts.tm_hour), width: 2, into: &prefix)
            prefix.append(UInt8(ascii: ":"))
            LogTimestamp.digits(Int(parts.tm_min), width: 2, into: &prefix)
            prefix.append(UInt8(ascii: ":"))
            LogTimestamp.digits(Int(parts.tm_sec), width: 2, into: &prefix)
            prefix.append(UInt8(ascii: "."))
        }
        out.append(contentsOf: prefix)
        LogTimestamp.digits(Int(now.tv_nsec) / 1_000_000, width: 3, into: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// Appends `value` (not negative) in decimal, left-padded with zeros to `width` digits.
    static func digits(_ value: Int, width: Int = 1, into out: inout [UInt8]) {
        var scratch: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { raw in
            var v = UInt64(max(0, value)), n = 0
            repeat {
                raw[19 - n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0 && n < 20
            while n < min(width, 20) {
                raw[19 - n] = UInt8(ascii: "0")
                n += 1
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(20 - n)...]))
        }
    }
}

/// JSON string escaping for log lines, on bytes.
enum LogJSON {
    /// Appends `bytes` as the inside of a JSON string: `"` and `\` are escaped, control bytes become `\u00XX`.
    static func appendEscaped<S: Sequence>(_ bytes: S, into out: inout [UInt8]) where S.Element == UInt8 {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20, 0x7F:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(hex(byte >> 4))
                out.append(hex(byte & 0xF))
            default:
                out.append(byte)
            }
        }
    }

    /// The upper-case hex digit for `nibble` (0...15).
    static func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10 }
}
