#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Date formats used on the wire, built with `gmtime_r` because `DateFormatter` is neither cheap
/// nor safe to share between loop threads.
enum HTTPDates {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func brokenDown(_ seconds: Int) -> tm {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return parts
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func imfFixdate(_ date: Date) -> String {
        let t = brokenDown(Int(date.timeIntervalSince1970.rounded(.down)))
        return "\(days[Int(t.tm_wday)]), \(two(t.tm_mday)) \(months[Int(t.tm_mon)]) \(t.tm_year + 1900) "
            + "\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `1994-11-06T08:49:37.123Z`.
    static func rfc3339(_ date: Date) -> String {
        let millisecondsTotal = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = millisecondsTotal >= 0 ? millisecondsTotal / 1000 : (millisecondsTotal - 999) / 1000
        let milliseconds = millisecondsTotal - seconds * 1000
        let t = brokenDown(seconds)
        let ms = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(t.tm_year + 1900)-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)).\(ms)Z"
    }
}
