import Foundation

/// What to list, in the spirit of a Core Data fetch request: filter, sort, limit, and a cursor to page on.
public struct ListQuery: Hashable, Sendable {
    /// Sort orders.
    public enum Sort: String, Hashable, Sendable, Codable, CaseIterable {
        /// By identifier, in UTF-8 byte order (the default; pages cheaply through any number of blobs).
        case identifier
        /// By modification date, oldest first, ties by identifier (each page scans the store).
        case modified
    }

    /// Only identifiers that start with this (byte-wise); empty means all.
    public var prefix: String
    /// Only blobs whose content type starts with this, e.g. `image/`; `nil` means all.
    public var contentTypePrefix: String?
    /// Sort order.
    public var sort: Sort
    /// At most this many blobs per page (1...10_000).
    public var limit: Int
    /// Continue after this point: the ``ListPage/nextCursor`` of the previous page.
    public var cursor: String?

    /// The largest page.
    public static let maximumLimit = 10_000

    /// Creates a query; the defaults list everything by identifier, 1,000 at a time.
    public init(prefix: String = "", contentTypePrefix: String? = nil, sort: Sort = .identifier, limit: Int = 1000, cursor: String? = nil) {
        self.prefix = prefix
        self.contentTypePrefix = contentTypePrefix
        self.sort = sort
        self.limit = limit
        self.cursor = cursor
    }
}

/// One page of a listing.
public struct ListPage: Hashable, Sendable, Codable {
    /// The blobs on this page, in the query's order.
    public var items: [BlobMetadata]
    /// Pass as ``ListQuery/cursor`` to get the next page; `nil` when this is the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(items: [BlobMetadata], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// The position after which a listing continues. Opaque to callers; stable across store implementations.
enum ListCursor: Hashable, Sendable {
    /// After this identifier (identifier order).
    case afterIdentifier([UInt8])
    /// After this (modification time in ns, identifier) pair (modified order).
    case afterModified(Int64, [UInt8])

    /// The cursor as an opaque printable token.
    var token: String {
        switch self {
        case .afterIdentifier(let id): return "i" + Hex.encode(id)
        case .afterModified(let nanos, let id): return "m\(nanos).\(Hex.encode(id))"
        }
    }

    /// Parses a token made by ``token`` for the given sort; `nil` if malformed.
    init?(token: String, sort: ListQuery.Sort) {
        switch sort {
        case .identifier:
            guard token.hasPrefix("i"), let id = Hex.decode(token.dropFirst()) else { return nil }
            self = .afterIdentifier(id)
        case .modified:
            guard token.hasPrefix("m"), let dot = token.firstIndex(of: ".") else { return nil }
            guard let nanos = Int64(token[token.index(after: token.startIndex)..<dot]),
                let id = Hex.decode(token[token.index(after: dot)...])
            else { return nil }
            self = .afterModified(nanos, id)
        }
    }
}

extension ListQuery {
    /// Checks the limit and cursor; returns the parsed cursor.
    func validated(store: String) throws(BlobStoreError) -> ListCursor? {
        guard (1...ListQuery.maximumLimit).contains(limit) else {
            throw .invalidQuery(store: store, reason: "limit must be 1...\(ListQuery.maximumLimit) (got \(limit))")
        }
        guard let token = cursor else { return nil }
        guard let parsed = ListCursor(token: token, sort: sort) else {
            throw .invalidQuery(store: store, reason: "malformed cursor '\(BlobStoreError.abbreviated(token))' for sort '\(sort.rawValue)'")
        }
        return parsed
    }
}

/// Byte-wise identifier ordering and matching, shared by every store so that pages agree.
enum IdentifierOrder {
    /// `a < b` in UTF-8 byte order.
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// Whether `metadata` belongs in `query`'s results (ignoring the cursor).
    static func matches(_ metadata: BlobMetadata, prefix: [UInt8], contentTypePrefix: String?) -> Bool {
        if !prefix.isEmpty, !metadata.identifier.utf8.starts(with: prefix) { return false }
        if let type = contentTypePrefix, !metadata.contentType.hasPrefix(type) { return false }
        return true
    }

    /// Whether `metadata` sorts after `cursor`.
    static func isAfter(_ metadata: BlobMetadata, cursor: ListCursor?) -> Bool {
        guard let cursor else { return true }
        let id = Array(metadata.identifier.utf8)
        switch cursor {
        case .afterIdentifier(let after):
            return precedes(after, id)
        case .afterModified(let nanos, let after):
            let mine = metadata.modified.nanosecondsSince1970
            return mine > nanos || (mine == nanos && precedes(after, id))
        }
    }

    /// The cursor that resumes after `metadata`.
    static func cursor(after metadata: BlobMetadata, sort: ListQuery.Sort) -> ListCursor {
        switch sort {
        case .identifier: return .afterIdentifier(Array(metadata.identifier.utf8))
        case .modified: return .afterModified(metadata.modified.nanosecondsSince1970, Array(metadata.identifier.utf8))
        }
    }

    /// Whether `a` comes before `b` under `sort`.
    static func ordered(_ a: BlobMetadata, _ b: BlobMetadata, sort: ListQuery.Sort) -> Bool {
        switch sort {
        case .identifier:
            return precedes(Array(a.identifier.utf8), Array(b.identifier.utf8))
        case .modified:
            let x = a.modified.nanosecondsSince1970, y = b.modified.nanosecondsSince1970
            return x != y ? x < y : precedes(Array(a.identifier.utf8), Array(b.identifier.utf8))
        }
    }
}

extension Date {
    /// Whole nanoseconds since 1970, the resolution stored on disk.
    var nanosecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1e9).rounded()) }

    /// The date `nanoseconds` after 1970.
    init(nanosecondsSince1970 nanoseconds: Int64) {
        self.init(timeIntervalSince1970: Double(nanoseconds) / 1e9)
    }
}
