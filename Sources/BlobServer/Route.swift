#if canImport(Glibc)
import Glibc
#endif

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
    ///
    /// Matched on bytes: this runs for every request, and String comparisons and `hasPrefix`
    /// work on Characters (grapheme breaking), which cost more than the rest of routing.
    init?(decodedPath path: [UInt8]) {
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
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let store = String(decoding: rest[..<slash], as: UTF8.self)
        let tail = rest[(slash + 1)...]
        // `blobs/` names the blob with an empty identifier (refused as invalid), not the collection:
        // a client that builds a blob path from an empty string must not reach DELETE-all.
        if equals(tail, "blobs") { self = .blobs(store: store); return }
        if equals(tail, "verify") { self = .verify(store: store); return }
        guard hasPrefix(tail, "blobs/") else { return nil }
        self = .blob(store: store, identifier: String(decoding: tail.dropFirst(6), as: UTF8.self))
    }
}
