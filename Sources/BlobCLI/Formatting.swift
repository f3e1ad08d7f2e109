import BlobProtocol
import BlobStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Human-readable text: sizes, counts, dates, pixel sizes and aligned columns.
package enum Formatting {
    /// `512 B`, `1.0 KiB`, `1.2 MiB`, `117.7 GiB` (binary units, one decimal).
    package static func size(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1023.95 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f", value) + " " + units[unit]
    }

    /// `1,234,567`.
    package static func count<N: BinaryInteger>(_ number: N) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return (number < 0 ? "-" : "") + result
    }

    /// `640×480`.
    package static func pixels(_ image: ImageInfo) -> String { "\(image.width)×\(image.height)" }

    /// `PNG 640×480`.
    package static func image(_ image: ImageInfo) -> String { "\(image.format.rawValue.uppercased()) \(pixels(image))" }

    /// `2025-01-31 14:05:09` in the local time zone (or `timeZone`, seconds east of UTC, for tests).
    package static func date(_ date: Date, utcOffset: Int? = nil) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let parts = brokenDown(seconds: seconds, utcOffset: utcOffset)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d", parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second)
    }

    /// `2025-01-31T13:05:09.123Z`: RFC 3339 in UTC with milliseconds (rounded down), as the daemon's
    /// HTTP metadata has them (the same writer), for JSON.
    package static func isoDate(_ date: Date) -> String {
        HTTPDates.rfc3339(date)
    }

    private static func brokenDown(seconds: Int, utcOffset: Int?) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        var time = time_t(seconds + (utcOffset ?? 0))
        var parts = tm()
        if utcOffset == nil {
            localtime_r(&time, &parts)
        } else {
            gmtime_r(&time, &parts)
        }
        return (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// Column alignment of a table cell.
    package enum Alignment: Sendable { case left, right }

    /// Rows of cells as aligned columns separated by two spaces; the last column is not padded.
    /// Widths count characters, so `×` and other non-ASCII letters line up.
    package static func columns(_ rows: [[String]], alignments: [Alignment] = []) -> String {
        guard let columnCount = rows.map(\.count).max(), columnCount > 0 else { return "" }
        var widths = [Int](repeating: 0, count: columnCount)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var lines: [String] = []
        for row in rows {
            var line = ""
            for (index, cell) in row.enumerated() {
                let isLast = index == row.count - 1
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                let alignment = index < alignments.count ? alignments[index] : .left
                if index > 0 { line += "  " }
                switch alignment {
                case .right: line += padding + cell
                case .left: line += isLast ? cell : cell + padding
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The block `put` and `stat` print for one blob.
    package static func metadataBlock(_ metadata: BlobMetadata, store: String, utcOffset: Int? = nil) -> String {
        var rows: [[String]] = [
            ["Blob:", "\(store)/\(metadata.identifier)"],
            ["Size:", "\(size(metadata.size)) (\(count(metadata.size)) byte\(metadata.size == 1 ? "" : "s"))"],
            ["Content type:", metadata.contentType],
            ["ETag:", metadata.etag.rawValue],
            ["Created:", date(metadata.created, utcOffset: utcOffset)],
            ["Modified:", date(metadata.modified, utcOffset: utcOffset)],
        ]
        if let expires = metadata.expires { rows.append(["Expires:", date(expires, utcOffset: utcOffset)]) }
        if let info = metadata.image { rows.append(["Image:", image(info)]) }
        let pairs = metadata.userMetadata.sorted { $0.key < $1.key }
        for (index, pair) in pairs.enumerated() {
            rows.append([index == 0 ? "Metadata:" : "", "\(pair.key)=\(pair.value)"])
        }
        return columns(rows)
    }
}
