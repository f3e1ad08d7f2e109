import Foundation

/// A signing time in the two forms Signature V4 writes: `20150830T123600Z` and `20150830` (UTC).
///
/// Formatted by hand from the Unix time: DateFormatter is costly to make and not ours to share
/// across threads, and a signature must not depend on the process's locale or time zone.
package struct AMZDate: Sendable, Hashable {
    /// `YYYYMMDD'T'HHMMSS'Z'`, the `x-amz-date` value.
    package let timestamp: String
    /// `YYYYMMDD`, the credential scope's date.
    package let dateStamp: String

    /// The signing time for `date`, truncated to the second.
    package init(_ date: Date) {
        self.init(unixSeconds: Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// The signing time for a count of seconds since 1970-01-01T00:00:00Z.
    package init(unixSeconds: Int64) {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = unixSeconds - days * 86_400
        let (year, month, day) = Self.civil(fromDays: days)
        let date = Self.digits(year, 4) + Self.digits(month, 2) + Self.digits(day, 2)
        dateStamp = date
        timestamp = date + "T" + Self.digits(secondOfDay / 3600, 2) + Self.digits(secondOfDay / 60 % 60, 2)
            + Self.digits(secondOfDay % 60, 2) + "Z"
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
