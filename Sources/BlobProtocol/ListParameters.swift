import BlobStore

/// The query parameters of `GET /v1/stores/{store}/blobs` and `GET /v1/events`.
package enum ListParameters {
    /// Only identifiers starting with this.
    package static let prefix = "prefix"
    /// Only content types starting with this.
    package static let type = "type"
    /// `identifier` or `modified`.
    package static let sort = "sort"
    /// Page size.
    package static let limit = "limit"
    /// The previous page's `nextCursor`.
    package static let cursor = "cursor"
    /// `GET /v1/events?store=NAME`: one store's events.
    package static let store = "store"

    /// The query string (without `?`) asking for `query`; empty values are left out, as blobd
    /// treats them as absent.
    package static func queryString(_ query: ListQuery) -> String {
        var parameters = ["\(limit)=\(query.limit)", "\(sort)=\(query.sort.rawValue)"]
        if !query.prefix.isEmpty { parameters.append("\(prefix)=" + Route.encode(query.prefix)) }
        if let value = query.contentTypePrefix, !value.isEmpty { parameters.append("\(type)=" + Route.encode(value)) }
        if let value = query.cursor, !value.isEmpty { parameters.append("\(cursor)=" + Route.encode(value)) }
        return parameters.joined(separator: "&")
    }
}
