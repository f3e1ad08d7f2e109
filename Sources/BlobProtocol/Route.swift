import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// What a request path names (docs/PROTOCOL.md, "Paths and names").
package enum Route: Hashable, Sendable {
    /// `/v1/health`
    case health
    /// `/v1/events`: change events as Server-Sent Events.
    case events
    /// `/metrics`: Prometheus text format.
    case metrics
    /// `/v1/stores`
    case stores
    /// `/v1/stores/{store}`: one store's cache policy and usage.
    case store(store: String)
    /// `/v1/stores/{store}/blobs`
    case blobs(store: String)
    /// `/v1/stores/{store}/verify`
    case verify(store: String)
    /// `/v1/stores/{store}/blobs/{id}`; the identifier is the rest of the path, `/` included.
    case blob(store: String, identifier: String)

    /// Matches a percent-decoded path; `nil` when it names nothing.
    ///
    /// Matched on bytes: this runs for every request, and String comparisons and `hasPrefix`
    /// work on Characters (grapheme breaking), which cost more than the rest of routing.
    package init?(decodedPath path: [UInt8]) {
        func equals(_ bytes: ArraySlice<UInt8>, _ literal: StaticString) -> Bool {
            bytes.count == literal.utf8CodeUnitCount
                && bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, literal.utf8Start, bytes.count) == 0 }
        }
        func hasPrefix(_ bytes: ArraySlice<UInt8>, _ literal: StaticString) -> Bool {
            bytes.count >= literal.utf8CodeUnitCount
                && bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, literal.utf8Start, literal.utf8CodeUnitCount) == 0 }
        }
        let all = path[...]
        if equals(all, "/v1/health") { self = .health; return }
        if equals(all, "/v1/events") { self = .events; return }
        if equals(all, "/metrics") { self = .metrics; return }
        if equals(all, "/v1/stores") || equals(all, "/v1/stores/") { self = .stores; return }
        let prefix: StaticString = "/v1/stores/"
        guard hasPrefix(all, prefix) else { return nil }
        let rest = all.dropFirst(prefix.utf8CodeUnitCount)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else {
            guard !rest.isEmpty else { return nil }
            self = .store(store: String(decoding: rest, as: UTF8.self))
            return
        }
        let store = String(decoding: rest[..<slash], as: UTF8.self)
        let tail = rest[(slash + 1)...]
        // `blobs/` names the blob with an empty identifier (refused as invalid), not the collection:
        // a client that builds a blob path from an empty string must not reach DELETE-all.
        if equals(tail, "blobs") { self = .blobs(store: store); return }
        if equals(tail, "verify") { self = .verify(store: store); return }
        guard hasPrefix(tail, "blobs/") else { return nil }
        self = .blob(store: store, identifier: String(decoding: tail.dropFirst(6), as: UTF8.self))
    }

    /// The percent-encoded path naming this resource, ready to send.
    ///
    /// Names are encoded whole, every byte outside RFC 3986's unreserved set escaped, `/` in an
    /// identifier included (`%2F`): blobd decodes the path before matching, so `a%2Fb` names `a/b`
    /// as `a/b` would, and no `?`, `#`, `%` or space in a name can end the path early.
    package var target: String {
        switch self {
        case .health: "/v1/health"
        case .events: "/v1/events"
        case .metrics: "/metrics"
        case .stores: "/v1/stores"
        case .store(let store): "/v1/stores/\(Route.encode(store))"
        case .blobs(let store): "/v1/stores/\(Route.encode(store))/blobs"
        case .verify(let store): "/v1/stores/\(Route.encode(store))/verify"
        case .blob(let store, let identifier): "/v1/stores/\(Route.encode(store))/blobs/\(Route.encode(identifier))"
        }
    }

    /// `text` percent-encoded as one path segment or query value.
    package static func encode(_ text: String) -> String { PercentEncoding.encode(text, keepingSlash: false) }

    /// The methods this path takes, as the `Allow` header of a `405` lists them.
    package var allowedMethods: String {
        switch self {
        case .health, .stores, .events, .metrics: "GET, HEAD"
        case .verify: "GET, HEAD, POST"
        case .store: "GET, HEAD, PUT"
        case .blobs: "GET, HEAD, DELETE"
        case .blob: "GET, HEAD, PUT, DELETE"
        }
    }
}
