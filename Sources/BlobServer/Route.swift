/// What a request path names.
enum Route: Equatable {
    /// `/v1/health`
    case health
    /// `/v1/events`: change events as Server-Sent Events.
    case events
    /// `/metrics`: Prometheus text format.
    case metrics
    /// `/v1/stores`
    case stores
    /// `/v1/stores/{store}/blobs`
    case blobs(store: String)
    /// `/v1/stores/{store}/verify`
    case verify(store: String)
    /// `/v1/stores/{store}/blobs/{id}`; the identifier is the rest of the path, `/` included.
    case blob(store: String, identifier: String)

    /// Matches a percent-decoded path; `nil` when it names nothing.
    init?(decodedPath path: [UInt8]) {
        let text = String(decoding: path, as: UTF8.self)
        if text == "/v1/health" { self = .health; return }
        if text == "/v1/events" { self = .events; return }
        if text == "/metrics" { self = .metrics; return }
        if text == "/v1/stores" || text == "/v1/stores/" { self = .stores; return }
        let prefix = "/v1/stores/"
        guard text.hasPrefix(prefix) else { return nil }
        let rest = text.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let store = String(rest[..<slash])
        let tail = rest[rest.index(after: slash)...]
        if tail == "blobs" || tail == "blobs/" { self = .blobs(store: store); return }
        if tail == "verify" { self = .verify(store: store); return }
        guard tail.hasPrefix("blobs/") else { return nil }
        self = .blob(store: store, identifier: String(tail.dropFirst("blobs/".count)))
    }
}
