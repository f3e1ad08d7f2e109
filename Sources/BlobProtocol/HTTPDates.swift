import Foundation

/// Date formats used on the wire, written byte by byte from the Unix time: a GET answers with two
/// dates, and `DateFormatter`, `gmtime_r` plus string interpolation cost more per request than
/// parsing the whole request head.
package enum HTTPDates {
    /// Bytes of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    package static let imfFixdateLength = 29
    /// Bytes of an RFC 3339 date with milliseconds: `1994-11-06T08:49:37.123Z` (years 0…9999).
    package static let rfc3339Length = 24

    private static let dayNames: StaticString = "ThuFriSatSunMonTueWed"  // 1970-01-01 was a Thursday
    private static let monthNames: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"

    /// Whole seconds and milliseconds since the epoch, rounded down (also before 1970) from the
    /// nearest microsecond: a `Double` this far from 1970 holds no finer time, and a date read back
    /// from `.076Z` is 0.07599999… seconds past, which must be written as `.076Z` again.
    private static func split(_ date: Date) -> (seconds: Int64, milliseconds: Int) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let total = micros >= 0 ? micros / 1000 : (micros - 999) / 1000
        let seconds = total >= 0 ? total / 1000 : (total - 999) / 1000
        return (seconds, Int(total - seconds * 1000))
    }

    /// Writes the IMF-fixdate (RFC 9110 §5.6.7) of `date` into `out` (``imfFixdateLength`` bytes).
    package static func writeIMFFixdate(_ date: Date, into out: UnsafeMutableBufferPointer<UInt8>) {
        let seconds = split(date).seconds
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = Calendrical.civil(days: days)
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
    package static func writeRFC3339(_ date: Date, into out: UnsafeMutableBufferPointer<UInt8>) {
        let (seconds, milliseconds) = split(date)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = Calendrical.civil(days: days)
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
    package static func imfFixdate(_ date: Date) -> String {
        String(unsafeUninitializedCapacity: imfFixdateLength) { buffer in
            writeIMFFixdate(date, into: buffer)
            return imfFixdateLength
        }
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `1994-11-06T08:49:37.123Z`.
    package static func rfc3339(_ date: Date) -> String {
        String(unsafeUninitializedCapacity: rfc3339Length) { buffer in
            writeRFC3339(date, into: buffer)
            return rfc3339Length
        }
    }
}
