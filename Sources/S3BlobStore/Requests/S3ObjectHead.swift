internal import HTTP1
import Foundation

/// What GetObject and HeadObject answer in their headers about the object.
package struct S3ObjectHead: Sendable, Hashable {
    /// `Content-Length`: the object's size, or the range's on a `206`.
    package var contentLength: Int64?
    /// `Content-Type`.
    package var contentType: String?
    /// `ETag`, unquoted (the gateway's is the MD5 of the body, or of the parts for multipart).
    package var etag: String?
    /// `Last-Modified`.
    package var lastModified: Date?
    /// `Content-Range` on a `206`.
    package var contentRange: S3ContentRange?
    /// User metadata: `x-amz-meta-NAME` without the prefix, names lowercased (the gateway returns
    /// them lowercased, `_` turned into `-`), values as sent back (trimmed by the gateway).
    package var metadata: [String: String]
    /// The other stored headers that round-trip: `Cache-Control`, `Content-Disposition`,
    /// `Content-Encoding`, `Content-Language`, `Expires`, by lowercased name.
    package var storedHeaders: [String: String]

    /// The stored headers S3 keeps with an object besides its content type and metadata.
    package static let storedHeaderNames: Set<String> = [
        "cache-control", "content-disposition", "content-encoding", "content-language", "expires",
    ]

    /// Reads the answer's header fields (an `HTTPHeaders` or any list of name–value pairs).
    package init(headers: some Sequence<(name: String, value: String)>) throws(S3ResponseParseError) {
        metadata = [:]
        storedHeaders = [:]
        for (rawName, value) in headers {
            let name = rawName.lowercased()
            switch name {
            case "content-length":
                guard let length = Int64(value.trimmingSpaces()), length >= 0 else {
                    throw S3ResponseParseError(reason: "a Content-Length of '\(value)'")
                }
                contentLength = length
            case "content-type":
                contentType = value
            case "etag":
                etag = S3XMLValues.unquotedETag(String(value.trimmingSpaces()))
            case "last-modified":
                lastModified = S3HTTPDate.parse(value)
            case "content-range":
                guard let range = S3ContentRange(value) else { throw S3ResponseParseError(reason: "a Content-Range of '\(value)'") }
                contentRange = range
            default:
                if name.hasPrefix("x-amz-meta-") {
                    metadata[String(name.dropFirst("x-amz-meta-".count))] = value
                } else if Self.storedHeaderNames.contains(name) {
                    storedHeaders[name] = value
                }
            }
        }
    }
}

/// `Content-Range: bytes FIRST-LAST/TOTAL` (TOTAL may be `*`).
package struct S3ContentRange: Sendable, Hashable {
    /// The first byte sent.
    package var first: Int64
    /// The last byte sent, inclusive.
    package var last: Int64
    /// The object's whole size, when known.
    package var total: Int64?

    /// Parses the header's value; `nil` when it is not a satisfied byte range.
    package init?(_ value: String) {
        let text = value.trimmingSpaces()
        guard text.hasPrefix("bytes ") else { return nil }
        let rest = text.dropFirst(6)
        guard let dash = rest.firstIndex(of: "-"), let slash = rest.firstIndex(of: "/"), dash < slash,
            let first = Int64(rest[..<dash]), let last = Int64(rest[rest.index(after: dash)..<slash]), first >= 0, last >= first
        else { return nil }
        let totalText = rest[rest.index(after: slash)...]
        if totalText == "*" {
            total = nil
        } else {
            guard let total = Int64(totalText), total > last else { return nil }
            self.total = total
        }
        self.first = first
        self.last = last
    }
}

/// HTTP dates as S3 sends them (`Last-Modified: Tue, 24 Nov 2026 14:30:48 GMT`, RFC 9110's IMF-fixdate).
package enum S3HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Parses an IMF-fixdate; `nil` for anything else.
    package static func parse(_ text: String) -> Date? {
        let parts = text.trimmingSpaces().split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int64(parts[1]), (1...31).contains(day), parts[1].count == 2,
            let monthIndex = months.firstIndex(of: String(parts[2])),
            let year = Int64(parts[3]), parts[3].count == 4
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, time.allSatisfy({ $0.count == 2 }),
            let hour = Int64(time[0]), let minute = Int64(time[1]), let second = Int64(time[2]),
            hour < 24, minute < 60, second < 61
        else { return nil }
        let days = S3XMLValues.daysFromCivil(year: year, month: Int64(monthIndex + 1), day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3600 + minute * 60 + second))
    }
}
