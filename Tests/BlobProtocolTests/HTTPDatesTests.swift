import BlobProtocol
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct HTTPDatesTests {
    @Test func dates() {
        let date = Date(timeIntervalSince1970: 784_111_777.5)
        #expect(HTTPDates.imfFixdate(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDates.rfc3339(date) == "1994-11-06T08:49:37.500Z")
        #expect(HTTPDates.rfc3339(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(HTTPDates.imfFixdate(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    /// The byte-level formatter agrees with the C library's calendar on dates from 1900 to 2200.
    @Test func datesAgreeWithGmtime() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let seconds = Int64.random(in: -2_208_988_800...7_258_118_400, using: &generator)
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][Int(parts.tm_wday)]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(parts.tm_mon)]
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let expected = "\(days), \(two(parts.tm_mday)) \(months) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            let formatted = HTTPDates.imfFixdate(Date(timeIntervalSince1970: TimeInterval(seconds)))
            if formatted != expected {
                Issue.record("\(seconds): \(formatted) != \(expected)")
                return
            }
        }
    }

    @Test func parsesRFC3339AndIMFFixdate() {
        #expect(HTTPDates.parseRFC3339("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDates.parseRFC3339("1970-01-01T01:00:00.5+01:00") == Date(timeIntervalSince1970: 0.5))
        #expect(HTTPDates.parseRFC3339("1969-12-31T23:00:00-01:00") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDates.parseRFC3339("1970-01-01 00:00:00") == nil)
        #expect(HTTPDates.parseRFC3339("1970-01-01T00:00:00.Z") == nil)
        #expect(HTTPDates.parseRFC3339("1970-13-01T00:00:00Z") == nil)
        #expect(HTTPDates.parseRFC3339("1970-01-01T00:00:00Zjunk") == nil)
        #expect(HTTPDates.parseIMFFixdate("Sun, 22 Nov 2026 22:28:28 GMT") == Date(timeIntervalSince1970: 1_795_386_508))
        #expect(HTTPDates.parseIMFFixdate("Sun, 22 Nov 2026 22:28:28 UTC") == nil)
        #expect(HTTPDates.parseIMFFixdate("Sun, 22 Foo 2026 22:28:28 GMT") == nil)
        #expect(HTTPDates.parseIMFFixdate("2026-11-22T22:28:28Z") == nil)
    }

    /// What blobd writes, its client reads back: to the millisecond (RFC 3339) and to the second
    /// (IMF-fixdate), also before 1970; and writing the parsed date again gives the same text.
    @Test func formattedDatesParseBack() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let milliseconds = Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = HTTPDates.rfc3339(date)
            let parsed = try #require(HTTPDates.parseRFC3339(text), "\(text)")
            #expect(abs(parsed.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.0005, "\(text)")
            let seconds = (milliseconds >= 0 ? milliseconds : milliseconds - 999) / 1000
            let fixdate = HTTPDates.imfFixdate(date)
            #expect(HTTPDates.parseIMFFixdate(fixdate) == Date(timeIntervalSince1970: Double(seconds)), "\(fixdate)")
            #expect(HTTPDates.imfFixdate(try #require(HTTPDates.parseIMFFixdate(fixdate))) == fixdate)
        }
    }
}
