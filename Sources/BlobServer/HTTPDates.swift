import Foundation

/// Date formats used on the wire, written byte by byte from the Unix time: a GET answers with two
/// dates, and `DateFormatter`, `gmtime_r` plus string interpolation cost more per request than
/// parsing the whole request head.
enum HTTPDates {
    /// Bytes of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static let imfFixdateLength = 29
    /// Bytes of an RFC 3339 date with milliseconds: `1994-11-06T08:49:37.123Z` (years 0…9999).
    static let rfc3339Length = 24

    private static let dayNames: StaticString = "ThuFriSatSunMonTueWed"  // 1970-01-01 was a Thursday
    private static let monthNames: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"

    /// A day count since 1970-01-01 split into its civil (proleptic Gregorian) year, month 1…12 and day 1…31.
    /// Howard Hinnant's `civil_from_days`, exact for every Int64 day in range.
    static func civil(days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Whole seconds and milliseconds since the epoch, rounded down (also before 1970).
    private static func split(_ date: Date) -> (seconds: Int64, milliseconds: Int) {
        let total = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = total >= 0 ? total / 1000 : (total - 999) / 1000
        return (seconds, Int(total - seconds * 1000))
    }

    /// Writes the IMF-fixdate (RFC 9110 §5.6.7) of `date` into `out` (``imfFixdateLength`` bytes).
    static func writeIMFFixdate(_ date: Date, into out: UnsafeMutableBufferPointer<UInt8>) {
        let seconds = split(date).seconds
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(days: days)
        let weekday = Int(((days % 7) + 7) % 7)
        var writer = DigitWriter(out)
        writer.name(dayNames, index: weekday)
        writer.literal(0x2C)  // ,
        writer.literal(0x20)
        writer.two(day)
        writer.literal(0x20)
        writer.name(monthNames, index: month - 1)
        writer.literal(0x20)
        writer.four(year)
        writer.literal(0x20)
        writer.time(secondOfDay)
        writer.literal(0x20)
        writer.literal(0x47)  // GMT
        writer.literal(0x4D)
        writer.literal(0x54)
    }

    /// Writes `date` as RFC 3339 in UTC with milliseconds into `out` (``rfc3339Length`` bytes).
    static func writeRFC3339(_ date: Date, into out: UnsafeMutableBufferPointer<UInt8>) {
        let (seconds, milliseconds) = split(date)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(days: days)
        var writer = DigitWriter(out)
        writer.four(year)
        writer.literal(0x2D)  // -
        writer.two(month)
        writer.literal(0x2D)
        writer.two(day)
        writer.literal(0x54)  // T
        writer.time(secondOfDay)
        writer.literal(0x2E)  // .
        writer.two(milliseconds / 10)
        writer.digit(milliseconds % 10)
        writer.literal(0x5A)  // Z
    }

    /// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func imfFixdate(_ date: Date) -> String {
        String(unsafeUninitializedCapacity: imfFixdateLength) { buffer in
            writeIMFFixdate(date, into: buffer)
            return imfFixdateLength
        }
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `1994-11-06T08:49:37.123Z`.
    static func rfc3339(_ date: Date) -> String {
        String(unsafeUninitializedCapacity: rfc3339Length) { buffer in
            writeRFC3339(date, into: buffer)
            return rfc3339Length
        }
    }
}

/// Writes fixed-width ASCII fields left to right into a buffer of known size.
private struct DigitWriter {
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

/// The `Date` header line (RFC 9110 §6.6.1) of the current second, formatted again only when the
/// second changes: every response carries one, and a loop answers many per second.
///
/// Owned by one event loop (not shared: each loop has its own, so no lock).
struct DateHeaderLine {
    private static let name: StaticString = "Date: "
    /// `Date: <IMF-fixdate>` CR LF.
    private var bytes: [UInt8]
    private var second: Int = .min

    init() {
        bytes = [UInt8](repeating: 0, count: DateHeaderLine.name.utf8CodeUnitCount + HTTPDates.imfFixdateLength + 2)
        let prefix = UnsafeBufferPointer(start: DateHeaderLine.name.utf8Start, count: DateHeaderLine.name.utf8CodeUnitCount)
        bytes.replaceSubrange(0..<prefix.count, with: prefix)
        bytes[bytes.count - 2] = 0x0D
        bytes[bytes.count - 1] = 0x0A
    }

    /// The line for the current second (reformatted in place when the second has changed).
    mutating func current() -> [UInt8] {
        let now = time(nil)
        if now != second {
            second = now
            let start = DateHeaderLine.name.utf8CodeUnitCount
            bytes.withUnsafeMutableBufferPointer { buffer in
                HTTPDates.writeIMFFixdate(
                    Date(timeIntervalSince1970: TimeInterval(now)),
                    into: UnsafeMutableBufferPointer(rebasing: buffer[start..<(start + HTTPDates.imfFixdateLength)]))
            }
        }
        return bytes
    }
}
