import Foundation

extension HTTPDates {
    private static let monthTokens = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date of an RFC 3339 timestamp (`2026-11-22T22:28:28.076Z`: any number of fraction digits,
    /// `Z` or an offset), or `nil` if `text` is not one.
    package static func parseRFC3339(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var value = 0
            for i in from..<(from + count) {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                value = value * 10 + Int(b[i] - 0x30)
            }
            return value
        }
        guard b.count >= 20, let year = number(0, 4), b[4] == 0x2D, let month = number(5, 2), b[7] == 0x2D,
            let day = number(8, 2), b[10] == 0x54 || b[10] == 0x74 || b[10] == 0x20, let hour = number(11, 2), b[13] == 0x3A,
            let minute = number(14, 2), b[16] == 0x3A, let second = number(17, 2)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < b.count, b[index] == 0x2E {
            index += 1
            var scale = 0.1
            let start = index
            while index < b.count, b[index] >= 0x30, b[index] <= 0x39 {
                fraction += Double(b[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            if index == start { return nil }
        }
        guard index < b.count else { return nil }
        var offset = 0
        if b[index] == 0x5A || b[index] == 0x7A {
            index += 1
        } else if b[index] == 0x2B || b[index] == 0x2D, let h = number(index + 1, 2), index + 3 < b.count, b[index + 3] == 0x3A,
            let m = number(index + 4, 2)
        {
            offset = (h * 60 + m) * 60 * (b[index] == 0x2B ? 1 : -1)
            index += 6
        } else {
            return nil
        }
        guard index == b.count else { return nil }
        guard let seconds = Calendrical.epochSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }

    /// The date of an IMF-fixdate (`Sun, 22 Nov 2026 22:28:28 GMT`), or `nil` if `text` is not one.
    package static func parseIMFFixdate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let monthIndex = monthTokens.firstIndex(of: String(parts[2])),
            let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3,
            let seconds = Calendrical.epochSeconds(year: year, month: monthIndex + 1, day: day, hour: time[0], minute: time[1], second: time[2])
        else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }
}
