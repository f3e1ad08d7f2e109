import BlobProtocol
import BlobStore
import Foundation

/// The human units of cache-mode options (docs/CLI.md, "Units"): sizes with `K`, `M`, `G`, `T`
/// (powers of 1024) and durations with `s`, `m`, `h`, `d`, `w`; each failure is a ``UsageError``
/// naming the option and the accepted forms.
enum PolicyUnits {
    /// The word that lifts a limit in `blob store set` (`--max-size none`).
    static let none = "none"

    private static let sizeUnits: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
    private static let durationUnits: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]

    /// `2G`, `512M`, `1.5T`, `4096`: bytes (powers of 1024; `KiB`, `MB` and the like are read as
    /// the same units), at least 1.
    static func size(_ text: String, option: String, command: String) throws(UsageError) -> Int64 {
        let refusal = UsageError(
            "'--\(option) \(text)' is not a size: give bytes, or a number with K, M, G or T (powers of 1024), e.g. 2G", command: command)
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if body.uppercased().hasSuffix("IB") { body = body.dropLast(2) } else if body.uppercased().hasSuffix("B") { body = body.dropLast() }
        var multiplier: Int64 = 1
        if let last = body.last?.uppercased().first, let unit = sizeUnits[last] {
            multiplier = unit
            body = body.dropLast()
        }
        guard let number = decimal(body), number > 0 else { throw refusal }
        let bytes = (number * Double(multiplier)).rounded(.up)
        guard bytes >= 1, bytes < 9.2e18 else { throw refusal }
        return Int64(bytes)
    }

    /// `30s`, `15m`, `1h`, `7d`, `2w`, `90` (seconds); fractions allowed (`1.5h`); more than zero and
    /// at most 100 years.
    static func duration(_ text: String, option: String, command: String) throws(UsageError) -> Duration {
        let refusal = UsageError(
            "'--\(option) \(text)' is not a duration: give seconds, or a number with s, m, h, d or w, e.g. 7d (at most \(PolicyJSON.maximumTimeToLiveSeconds) s)",
            command: command)
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        var multiplier = 1.0
        if let last = body.last, let unit = durationUnits[last] {
            multiplier = unit
            body = body.dropLast()
        }
        guard let number = decimal(body) else { throw refusal }
        let seconds = number * multiplier
        guard seconds >= 0.001, seconds <= Double(PolicyJSON.maximumTimeToLiveSeconds) else { throw refusal }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// A count of blobs, at least 1.
    static func count(_ text: String, option: String, command: String) throws(UsageError) -> Int {
        guard let value = Int(text.replacingOccurrences(of: "_", with: "")), value >= 1 else {
            throw UsageError("'--\(option) \(text)' is not a count: give a whole number of blobs, at least 1", command: command)
        }
        return value
    }

    /// An expiry date: RFC 3339 (`2026-12-01T00:00:00Z`), a date alone (`2026-12-01`, midnight UTC)
    /// or an HTTP date; `never` for no expiry.
    static func expiry(_ text: String, option: String, command: String) throws(UsageError) -> BlobExpiry {
        if text.lowercased() == ExpiryHeaders.never { return .never }
        let dayOnly = text.count == 10 ? HTTPDates.parseRFC3339(text + "T00:00:00Z") : nil
        guard let date = dayOnly ?? HTTPDates.parseRFC3339(text) ?? HTTPDates.parseIMFFixdate(text) else {
            throw UsageError(
                "'--\(option) \(text)' is not a date: give RFC 3339 (2026-12-01T08:00:00Z), a day (2026-12-01, midnight UTC) or 'never'",
                command: command)
        }
        return .at(date)
    }

    /// An unsigned decimal number without exponent or sign (`1`, `1.5`, `.5` is refused).
    private static func decimal(_ text: Substring) -> Double? {
        guard let first = text.first, first.isASCII, first.isNumber,
            text.allSatisfy({ ($0.isASCII && $0.isNumber) || $0 == "." }), text.filter({ $0 == "." }).count <= 1, text.last != "."
        else { return nil }
        return Double(text)
    }

    /// `2.0 GiB`-style size, or `-` for no limit.
    static func describeLimit(bytes: Int64?) -> String { bytes.map(Formatting.size) ?? "-" }

    /// `7d`, `1h 30m`, `45s`, `1.5s`: a duration in the largest units that state it exactly.
    static func describe(_ duration: Duration) -> String {
        let milliseconds = PolicyJSON.milliseconds(duration)
        guard milliseconds % 1000 == 0 else { return PolicyJSON.seconds(duration) + "s" }
        var seconds = milliseconds / 1000
        var parts: [String] = []
        for (unit, length) in [("w", Int64(604_800)), ("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] where seconds >= length {
            parts.append("\(seconds / length)\(unit)")
            seconds %= length
        }
        return parts.isEmpty ? "0s" : parts.joined(separator: " ")
    }
}
