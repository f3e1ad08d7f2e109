import BlobStore
import Foundation
import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// Decoding of the protocol's metadata object, list pages, store lists, and the blob headers.
enum MetadataJSON {
    /// The metadata object as sent on the wire.
    struct Wire: Decodable {
        struct Image: Decodable {
            var format: String
            var width: Int
            var height: Int
        }
        var identifier: String
        var size: Int64
        var contentType: String
        var etag: String
        var created: String
        var modified: String
        var metadata: [String: String]?
        var image: Image?

        func metadataValue() throws -> BlobMetadata {
            guard let tag = ETag(etag) else { throw BlobClientError.protocolError("bad etag '\(etag)' in metadata of '\(identifier)'") }
            guard let createdDate = RFC3339.parse(created), let modifiedDate = RFC3339.parse(modified) else {
                throw BlobClientError.protocolError("bad date in metadata of '\(identifier)': created '\(created)', modified '\(modified)'")
            }
            var info: ImageInfo?
            if let image {
                guard let format = ImageFormat(rawValue: image.format) else {
                    throw BlobClientError.protocolError("unknown image format '\(image.format)' in metadata of '\(identifier)'")
                }
                info = ImageInfo(format: format, width: image.width, height: image.height)
            }
            return BlobMetadata(
                identifier: identifier, size: size, contentType: contentType, etag: tag, created: createdDate,
                modified: modifiedDate, userMetadata: metadata ?? [:], image: info)
        }
    }

    private struct WirePage: Decodable {
        var items: [Wire]
        var nextCursor: String?
    }

    private struct WireStores: Decodable {
        struct Entry: Decodable {
            var name: String
            /// Present for the stores the daemon has open.
            var count: Int?
            var bytes: Int64?
            var heldBy: String?
        }
        var stores: [Entry]
    }

    /// Decodes one metadata object.
    static func metadata(from bytes: [UInt8]) throws -> BlobMetadata {
        try decode(Wire.self, bytes).metadataValue()
    }

    /// Decodes a list page.
    static func page(from bytes: [UInt8]) throws -> ListPage {
        let page = try decode(WirePage.self, bytes)
        return ListPage(items: try page.items.map { try $0.metadataValue() }, nextCursor: page.nextCursor)
    }

    /// Decodes `GET /v1/stores`.
    static func stores(from bytes: [UInt8]) throws -> [StoreSummary] {
        try decode(WireStores.self, bytes).stores.map { entry in
            var totals: StoreStatistics?
            if let count = entry.count, let bytes = entry.bytes { totals = StoreStatistics(count: count, bytes: bytes) }
            return StoreSummary(name: entry.name, statistics: totals, heldBy: entry.heldBy)
        }
    }

    /// Decodes `T` or throws a protocol error naming the problem.
    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            let text = String(decoding: bytes.prefix(200), as: UTF8.self)
            throw BlobClientError.protocolError("unexpected JSON from blobd (\(error)): \(text)")
        }
    }

    /// Metadata from the headers of a GET/HEAD response (`modified` has one-second precision there).
    static func metadata(identifier: String, headers: HTTPHeaders, size: Int64) throws -> BlobMetadata {
        guard let etagText = headers.first(name: "ETag"), let etag = ETag(etagText) else {
            throw BlobClientError.protocolError("response for '\(identifier)' lacks a valid ETag")
        }
        let modified = headers.first(name: "Last-Modified").flatMap(HTTPDate.parse) ?? Date(timeIntervalSince1970: 0)
        let created = headers.first(name: "Blob-Created").flatMap(RFC3339.parse) ?? modified
        var user: [String: String] = [:]
        for (name, value) in headers {
            let lower = name.lowercased()
            if lower.hasPrefix("blob-meta-") { user[String(lower.dropFirst(10))] = value }
        }
        var image: ImageInfo?
        if let format = headers.first(name: "Blob-Image-Format").flatMap(ImageFormat.init(rawValue:)),
            let width = headers.first(name: "Blob-Image-Width").flatMap({ Int($0) }),
            let height = headers.first(name: "Blob-Image-Height").flatMap({ Int($0) })
        {
            image = ImageInfo(format: format, width: width, height: height)
        }
        return BlobMetadata(
            identifier: identifier, size: size, contentType: headers.first(name: "Content-Type") ?? "application/octet-stream",
            etag: etag, created: created, modified: modified, userMetadata: user, image: image)
    }
}

/// RFC 3339 timestamps (`2026-11-22T22:28:28.076Z`, any number of fraction digits, `Z` or an offset).
enum RFC3339 {
    /// The date, or `nil` if `text` is not RFC 3339.
    static func parse(_ text: String) -> Date? {
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
}

/// IMF-fixdate (`Sun, 22 Nov 2026 22:28:28 GMT`).
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date, or `nil` if `text` is not an IMF-fixdate.
    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let monthIndex = months.firstIndex(of: String(parts[2])),
            let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3,
            let seconds = Calendrical.epochSeconds(year: year, month: monthIndex + 1, day: day, hour: time[0], minute: time[1], second: time[2])
        else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }
}

/// Civil-date arithmetic without a formatter (and without its thread-safety questions).
enum Calendrical {
    /// Seconds since 1970 of a UTC civil time, or `nil` if a field is out of range.
    static func epochSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        return ((days * 24 + hour) * 60 + minute) * 60 + second
    }
}
