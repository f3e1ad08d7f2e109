import Foundation
import Testing

/// Identifiers and store names that try to escape the root: each is either stored harmlessly
/// under the literal (decoded) identifier, readable back by GET and listed as such, or refused
/// with the documented 400 code. Afterwards nothing exists outside the root.
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct HostileNameTests {
    /// A path segment that, once decoded, must be stored as `identifier` exactly.
    struct Stored: Sendable {
        var encoded: String
        var identifier: String
    }

    static let token = "hostile-" + UUID().uuidString.prefix(8).lowercased()

    static let storedIdentifiers: [Stored] = [
        Stored(encoded: "...", identifier: "..."),
        Stored(encoded: "..x/x..", identifier: "..x/x.."),
        Stored(encoded: "~/x", identifier: "~/x"),
        Stored(encoded: "..%5C..%5Cwin", identifier: "..\\..\\win"),
        Stored(encoded: ".blobd.lock", identifier: ".blobd.lock"),
        Stored(encoded: "%25", identifier: "%"),
        Stored(encoded: "%2525", identifier: "%25"),
        Stored(encoded: "%20", identifier: " "),
        Stored(encoded: "a%3Fb%23c", identifier: "a?b#c"),
        Stored(encoded: "caf%C3%A9", identifier: "café"),
        Stored(encoded: "%F0%9F%90%88", identifier: "🐈"),
        Stored(encoded: "blobs", identifier: "blobs"),
        Stored(encoded: String(repeating: "i", count: 1024), identifier: String(repeating: "i", count: 1024)),
        Stored(encoded: String(repeating: "%C3%A9", count: 512), identifier: String(repeating: "é", count: 512)),
    ]

    /// Identifiers that break the store's rules (or the percent-encoding): refused, nothing stored.
    static let refusedIdentifiers: [(name: String, encoded: String, code: String, knownIssue: String?)] = [
        ("encoded NUL", "%00", "invalid_identifier", nil),
        ("NUL inside", "a%00b", "invalid_identifier", nil),
        // Segments a URL client would remove or resolve (PROTOCOL.md, "Identifiers"), and so
        // every path traversal: refused before any store is touched.
        ("../../x", "../../x", "invalid_identifier", nil),
        ("..%2F..%2Fx2", "..%2F..%2Fx2", "invalid_identifier", nil),
        ("encoded dots", "%2e%2e/%2e%2e/etc/passwd", "invalid_identifier", nil),
        ("encoded dots and slashes", "%2E%2E%2F%2E%2E%2Fetc%2Fshadow", "invalid_identifier", nil),
        ("leading slash", "/etc/passwd", "invalid_identifier", nil),
        ("encoded leading slash", "%2Fetc%2Fhosts", "invalid_identifier", nil),
        ("dot", ".", "invalid_identifier", nil),
        ("dot dot", "..", "invalid_identifier", nil),
        ("leading dot segment", "./here", "invalid_identifier", nil),
        ("dot dot inside", "a/../b", "invalid_identifier", nil),
        ("empty segment", "a//b", "invalid_identifier", nil),
        ("trailing slash", "dir/", "invalid_identifier", nil),
        ("four levels up, encoded", "%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f" + token, "invalid_identifier", nil),
        ("300 levels up", String(repeating: "../", count: 300) + token, "invalid_identifier", nil),
        ("up out of tmp", "tmp/../../" + token, "invalid_identifier", nil),
        ("1025 bytes", String(repeating: "j", count: 1025), "invalid_identifier", nil),
        ("1026 bytes of é", String(repeating: "%C3%A9", count: 513), "invalid_identifier", nil),
        ("invalid UTF-8 ff fe", "%ff%fe", "invalid_identifier", nil),
        ("invalid UTF-8 c3 28", "%c3%28", "invalid_identifier", nil),
        ("UTF-8 surrogate", "%ed%a0%80", "invalid_identifier", nil),
        ("overlong slash", "%c0%af", "invalid_identifier", nil),
        ("truncated sequence", "a%e2%82", "invalid_identifier", nil),
        ("control byte 01", "%01", "invalid_identifier", nil),
        ("newline", "a%0Ab", "invalid_identifier", nil),
        ("CRLF", "a%0D%0Ab", "invalid_identifier", nil),
        ("DEL", "%7F", "invalid_identifier", nil),
        ("C1 NEL", "%C2%85", "invalid_identifier", nil),
        ("escape sequence", "%1B%5B31m", "invalid_identifier", nil),
        ("bad escape", "a%zz", "bad_request", nil),
    ]

    /// Store names that must be refused with `400 invalid_store_name` (or `bad_request` for bad encoding).
    static let refusedStoreNames: [(encoded: String, code: String)] = [
        ("..", "invalid_store_name"),
        (".", "invalid_store_name"),
        ("%2e%2e", "invalid_store_name"),
        ("%2E", "invalid_store_name"),
        ("Photos", "invalid_store_name"),
        ("UPPER", "invalid_store_name"),
        (String(repeating: "s", count: 64), "invalid_store_name"),
        (String(repeating: "s", count: 300), "invalid_store_name"),
        ("-dash", "invalid_store_name"),
        (".hidden", "invalid_store_name"),
        ("_under", "invalid_store_name"),
        ("a%20b", "invalid_store_name"),
        ("caf%C3%A9", "invalid_store_name"),
        ("%ff", "invalid_store_name"),
        ("a%01", "invalid_store_name"),
        ("", "invalid_store_name"),
        ("%00", "invalid_store_name"),
        ("a%zz", "bad_request"),
    ]

    static var sentinels: [String] {
        ["/tmp/" + token, "/" + token, "/tmp/x", "/etc/" + token]
            .filter { !FileManager.default.fileExists(atPath: $0) }
    }

    @Test func identifiersAreStoredLiterallyInsideTheRoot() throws {
        let sentinels = Self.sentinels
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        for (index, item) in Self.storedIdentifiers.enumerated() {
            let target = "/v1/stores/esc/blobs/" + item.encoded
            let content = "content \(index)"
            let put = try Hostile.fetch(daemon, Hostile.put(target, body: content))
            #expect([200, 201].contains(put.status), "[\(item.encoded)] PUT: \(put.status) \(put.text)")
            #expect(put.json?["identifier"] as? String == item.identifier, "[\(item.encoded)] PUT stored as \(put.json?["identifier"] ?? "nil")")
            let get = try Hostile.fetch(daemon, Hostile.get(target))
            #expect(get.status == 200 && get.text == content, "[\(item.encoded)] GET: \(get.status) \(get.text)")
            let head = try Hostile.fetch(daemon, Hostile.request("HEAD \(target) HTTP/1.1"), method: "HEAD")
            #expect(head.status == 200, "[\(item.encoded)] HEAD: \(head.status)")
        }
        // The listing names every identifier literally.
        let list = try Hostile.fetch(daemon, Hostile.get("/v1/stores/esc/blobs?limit=10000"))
        let listed = Set(((list.json?["items"] as? [[String: Any]]) ?? []).compactMap { $0["identifier"] as? String })
        for item in Self.storedIdentifiers {
            #expect(listed.contains(item.identifier), "[\(item.encoded)] not listed as \(item.identifier)")
        }
        // The store verifies clean: every file sits where its identifier belongs.
        let verify = try Hostile.fetch(daemon, Hostile.get("/v1/stores/esc/verify"))
        #expect(verify.status == 200)
        #expect((verify.json?["corrupt"] as? [Any])?.isEmpty == true && (verify.json?["orphaned"] as? [Any])?.isEmpty == true, "\(verify.text)")
        // Deleting through a traversal-looking identifier is refused and removes nothing.
        let removed = try Hostile.fetch(daemon, Hostile.request("DELETE /v1/stores/esc/blobs/../.blobd.lock HTTP/1.1"))
        #expect(removed.errorCode == "invalid_identifier")
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/stores/esc/blobs/.blobd.lock")).status == 200)
        #expect(try Hostile.fetch(daemon, Hostile.get("/v1/health")).status == 200)
        Hostile.checkSurvived(daemon, group: "stored identifiers", sentinels: sentinels)
    }

    @Test func invalidIdentifiersAreRefused() throws {
        let sentinels = Self.sentinels
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        #expect(try Hostile.fetch(daemon, Hostile.put("/v1/stores/ids/blobs/seed", body: "seed")).status == 201)
        var cases: [HostileCase] = []
        for item in Self.refusedIdentifiers {
            let target = "/v1/stores/ids/blobs/" + item.encoded
            cases.append(HostileCase("PUT id \(item.name)", Hostile.put(target, body: "x"), [.error(400, item.code)], .open, knownIssue: item.knownIssue))
            cases.append(HostileCase("GET id \(item.name)", Hostile.get(target), [.error(400, item.code)], .open, knownIssue: item.knownIssue))
        }
        // A refused PUT to a store never written leaves no store behind.
        cases.append(HostileCase("PUT to a new store, bad id", Hostile.put("/v1/stores/fresh/blobs/%01", body: "x"), [.error(400, "invalid_identifier")], .open))
        cases.append(HostileCase("PUT to a new store, invalid UTF-8 id", Hostile.put("/v1/stores/fresh/blobs/%ff", body: "x"), [.error(400, "invalid_identifier")], .open))
        cases.append(HostileCase("list the store a refused PUT named", Hostile.get("/v1/stores/fresh/blobs"), [.error(404, "not_found")], .open))
        Hostile.run(cases, on: daemon)
        // Nothing but the seed was stored.
        let list = try Hostile.fetch(daemon, Hostile.get("/v1/stores/ids/blobs"))
        let listed = ((list.json?["items"] as? [[String: Any]]) ?? []).compactMap { $0["identifier"] as? String }
        #expect(listed == ["seed"], "stored: \(listed)")
        Hostile.checkSurvived(daemon, group: "refused identifiers", sentinels: sentinels)
    }

    @Test func storeNamesThatEscapeAreRefused() throws {
        let sentinels = Self.sentinels
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }
        var cases: [HostileCase] = []
        for item in Self.refusedStoreNames {
            let name = item.encoded.isEmpty ? "empty" : item.encoded.prefix(20).description
            cases.append(HostileCase("PUT store \(name)", Hostile.put("/v1/stores/\(item.encoded)/blobs/x", body: "x"), [.error(400, item.code)], .open))
            cases.append(HostileCase("GET store \(name)", Hostile.get("/v1/stores/\(item.encoded)/blobs/x"), [.error(400, item.code)], .open))
            cases.append(HostileCase("list store \(name)", Hostile.get("/v1/stores/\(item.encoded)/blobs"), [.error(400, item.code)], .open))
        }
        cases += [
            HostileCase("verify store ..", Hostile.get("/v1/stores/../verify"), [.error(400, "invalid_store_name")], .open),
            HostileCase("delete all of store %2e%2e", Hostile.request("DELETE /v1/stores/%2e%2e/blobs HTTP/1.1"), [.error(400, "invalid_store_name")], .open),
            HostileCase("events of store ..", Hostile.get("/v1/events?store=.."), [.error(400, "invalid_store_name")], .open),
            // A decoded %2F is a path separator: a%2Fb/blobs/x matches no route.
            HostileCase("store a%2Fb", Hostile.put("/v1/stores/a%2Fb/blobs/x", body: "x"), [.error(404, "not_found")], .open),
            HostileCase("store ..%2F..", Hostile.put("/v1/stores/..%2F../blobs/x", body: "x"), [.error(404, "not_found")], .open),
            HostileCase("store name 63 chars", Hostile.put("/v1/stores/\(String(repeating: "s", count: 63))/blobs/x", body: "x"), [.ok(201)], .open),
            HostileCase("store name with dots inside", Hostile.put("/v1/stores/a..b/blobs/x", body: "x"), [.ok(201)], .open),
            HostileCase("store name tmp", Hostile.put("/v1/stores/tmp/blobs/x", body: "x"), [.ok(201)], .open),
        ]
        Hostile.run(cases, on: daemon)
        // Only the valid stores exist.
        let stores = try Hostile.fetch(daemon, Hostile.get("/v1/stores"))
        let names = ((stores.json?["stores"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
        #expect(names == ["a..b", String(repeating: "s", count: 63), "tmp"], "stores: \(names)")
        let entries = try FileManager.default.contentsOfDirectory(atPath: daemon.root).filter { !$0.hasPrefix(".") }.sorted()
        #expect(entries == ["a..b", String(repeating: "s", count: 63), "tmp"], "root holds \(entries)")
        Hostile.checkSurvived(daemon, group: "store names", sentinels: sentinels)
    }
}
