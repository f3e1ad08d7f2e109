internal import BlobProtocol
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
        let (year, month, day) = Calendrical.civil(days: days)
        let date = Self.digits(year, 4) + Self.digits(Int64(month), 2) + Self.digits(Int64(day), 2)
        dateStamp = date
        timestamp = date + "T" + Self.digits(secondOfDay / 3600, 2) + Self.digits(secondOfDay / 60 % 60, 2)
            + Self.digits(secondOfDay % 60, 2) + "Z"
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
