import BlobProtocol
import BlobStore
import HTTP1
import Testing

@Suite struct RouteTests {
    func route(_ path: String) throws(RouteError) -> Route { try Route(encodedPath: ArraySlice(path.utf8)) }

    func failure(_ path: String) -> RouteError? {
        do {
            _ = try route(path)
            return nil
        } catch { return error }
    }

    @Test func routes() {
        #expect(Route(decodedPath: Array("/v1/health".utf8)) == .health)
        #expect(Route(decodedPath: Array("/v1/stores".utf8)) == .stores)
        #expect(Route(decodedPath: Array("/v1/stores/".utf8)) == .stores)
        #expect(Route(decodedPath: Array("/v1/stores/s/blobs".utf8)) == .blobs(store: "s"))
        #expect(Route(decodedPath: Array("/v1/stores/s/verify".utf8)) == .verify(store: "s"))
        #expect(Route(decodedPath: Array("/v1/stores/s/blobs/a/b/c".utf8)) == .blob(store: "s", identifier: "a/b/c"))
        #expect(Route(decodedPath: Array("/v1/stores/s".utf8)) == .store(store: "s"))
        #expect(Route(decodedPath: Array("/v1/stores/s/".utf8)) == nil)
        #expect(Route(decodedPath: Array("/v1/other".utf8)) == nil)
    }

    /// Every path of PROTOCOL.md's table names its resource, and building that resource's path gives it back.
    @Test func theDocumentedPathsAreTheRoutes() throws {
        let rows = ProtocolDocument.tableRows(ProtocolDocument.section("## Paths and names"))
        var routes: [Route] = []
        for row in rows where row.count == 2 {
            let template = try #require(ProtocolDocument.codeSpans(row[1]).first)
            let path = template.replacingOccurrences(of: "{store}", with: "photos").replacingOccurrences(of: "{id}", with: "2024/cat.jpg")
            let route = try route(path)
            #expect(route.target == path.replacingOccurrences(of: "2024/cat.jpg", with: "2024%2Fcat.jpg"))
            routes.append(route)
        }
        #expect(routes == [
            .health, .events, .metrics, .stores, .store(store: "photos"), .verify(store: "photos"), .blobs(store: "photos"),
            .blob(store: "photos", identifier: "2024/cat.jpg"),
        ])
        let paths = ProtocolDocument.section("## Paths and names").joined(separator: "\n")
        for route in routes { #expect(paths.contains("`\(route.allowedMethods)` for"), "Allow: \(route.allowedMethods)") }
    }

    /// The identifier is the rest of the path, decoded: `%2F` is a `/`, `+` is a plus, reserved
    /// bytes arrive encoded.
    @Test func trickyIdentifiersDecode() throws {
        #expect(try route("/v1/stores/photos/blobs/2024/cat.jpg") == .blob(store: "photos", identifier: "2024/cat.jpg"))
        #expect(try route("/v1/stores/s/blobs/a%2Fb") == .blob(store: "s", identifier: "a/b"))
        #expect(try route("/v1/stores/s/blobs/a+b") == .blob(store: "s", identifier: "a+b"))
        #expect(try route("/v1/stores/s/blobs/a%2Bb") == .blob(store: "s", identifier: "a+b"))
        #expect(try route("/v1/stores/s/blobs/a%20b%3F%25%23") == .blob(store: "s", identifier: "a b?%#"))
        #expect(try route("/v1/stores/s/blobs/%E6%97%A5") == .blob(store: "s", identifier: "日"))
        // Dots inside a segment are ordinary.
        for id in [".hidden", "a/b.", "...", "a/.b/c"] { #expect(try route("/v1/stores/s/blobs/" + id) == .blob(store: "s", identifier: id)) }
        // `blobs/` names the empty identifier, refused, never the collection.
        #expect(failure("/v1/stores/s/blobs/") == .invalidName(
            .invalidIdentifier(identifier: "", rule: .unaddressableSegment(byteOffset: 0)), in: .blob(store: "s", identifier: "")))
        #expect(failure("/v1/stores/s/blobs/")?.code == .invalidIdentifier)
    }

    @Test func unaddressableSegmentsAreInvalidIdentifiers() {
        for path in ["a//b", "/a", "a/", "a/./b", "a/../b", ".", "..", "a/%2E%2E/b", "%2e", "a%2F%2Fb", "a/%2E"] {
            let error = failure("/v1/stores/s/blobs/" + path)
            guard case .invalidName(.invalidIdentifier(_, .unaddressableSegment), .blob(store: "s", _))? = error else {
                Issue.record("\(path): \(String(describing: error))")
                continue
            }
            #expect(error?.code == .invalidIdentifier)
        }
        guard case .invalidName(.invalidIdentifier(_, .invalidUTF8), _)? = failure("/v1/stores/s/blobs/%ff%fe") else {
            Issue.record("invalid UTF-8 accepted")
            return
        }
    }

    /// `%00`: the control-character rule in `{id}`, the store-name rule in `{store}`, a bad path elsewhere.
    @Test func encodedNULIsRefusedByWhereItIs() {
        #expect(failure("/v1/stores/s/blobs/ab%00c") == .invalidName(
            .invalidIdentifier(identifier: "ab%00c", rule: .controlCharacter(scalar: 0, byteOffset: 2)), in: .blob(store: "s", identifier: "ab%00c")))
        #expect(failure("/v1/stores/s/blobs/%41%00")
            == .invalidName(.invalidIdentifier(identifier: "%41%00", rule: .controlCharacter(scalar: 0, byteOffset: 1)), in: .blob(store: "s", identifier: "%41%00")))
        guard case .invalidName(.invalidStoreName, .blob(store: "s%00", identifier: "a"))? = failure("/v1/stores/s%00/blobs/a") else {
            Issue.record("NUL in a store name")
            return
        }
        #expect(failure("/v1/stores/s%00/verify")?.code == .invalidStoreName)
        #expect(failure("/v1/health%00") == .malformedPath(.nulByte))
        #expect(failure("/v1/health%00")?.code == .badRequest)
        // A malformed escape anywhere wins.
        #expect(failure("/v1/stores/s/blobs/a%00%zz") == .malformedPath(.nulByte))
        #expect(failure("/v1/stores/s/blobs/a%zz") == .malformedPath(.malformedEscape))
        #expect(failure("/v1/stores/s/blobs/a%zz")?.message(path: "/x").hasPrefix("the request path is not valid percent-encoding") == true)
    }

    @Test func unknownPathsAreNotFound() {
        for path in ["/", "/v1", "/v1/store", "/v1/stores/s/", "/v1/stores/s/blob", "/v1/stores/s/verify/x", "/v2/health"] {
            #expect(failure(path) == .unknownPath, "\(path)")
        }
        #expect(RouteError.unknownPath.code == .notFound && RouteError.unknownPath.message(path: "/v2") == "no such resource: /v2")
    }

    /// A built path routes back to the same resource, whatever bytes the identifier holds.
    @Test func builtTargetsRouteBack() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab/ .-_~+%?#&=:@!$'()*,;[]é日🐈")
        for _ in 0..<2_000 {
            let length = Int.random(in: 1...12, using: &generator)
            let identifier = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard BlobIdentifier.unaddressableSegment(in: identifier) == nil else { continue }
            let route = Route.blob(store: "s-1.x_y", identifier: identifier)
            #expect(!route.target.dropFirst("/v1/stores/s-1.x_y/blobs/".count).contains("/"), "\(route.target)")
            #expect(try self.route(route.target) == route, "\(identifier)")
        }
    }

    @Test func listQueriesLeaveEmptyValuesOut() {
        #expect(ListParameters.queryString(ListQuery()) == "limit=1000&sort=identifier")
        #expect(ListParameters.queryString(ListQuery(prefix: "2024/a b", contentTypePrefix: "image/svg+xml", sort: .modified, limit: 5, cursor: "m1"))
            == "limit=5&sort=modified&prefix=2024%2Fa%20b&type=image%2Fsvg%2Bxml&cursor=m1")
        #expect(ListParameters.queryString(ListQuery(contentTypePrefix: "", cursor: "")) == "limit=1000&sort=identifier")
    }
}
