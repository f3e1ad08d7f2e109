import BlobProtocol
import BlobStore
import Foundation

/// A JSON value whose objects keep their keys in the order written, so `--json` output is stable
/// and reads the same every time.
package indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized() == rhs.serialized() }
    package func hash(into hasher: inout Hasher) { hasher.combine(serialized()) }

    /// The JSON text: compact on one line, or indented by two spaces when `pretty`.
    package func serialized(pretty: Bool = false) -> String {
        var out = ""
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(to out: inout String, pretty: Bool, indent: Int) {
        let newline = pretty ? "\n" : ""
        let pad = pretty ? String(repeating: "  ", count: indent + 1) : ""
        let closePad = pretty ? String(repeating: "  ", count: indent) : ""
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .string(let value): JSONValue.quote(value, into: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "[" + newline
            for (index, item) in items.enumerated() {
                out += pad
                item.write(to: &out, pretty: pretty, indent: indent + 1)
                out += (index < items.count - 1 ? "," : "") + newline
            }
            out += closePad + "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{" + newline
            for (index, (key, value)) in members.enumerated() {
                out += pad
                JSONValue.quote(key, into: &out)
                out += pretty ? ": " : ":"
                value.write(to: &out, pretty: pretty, indent: indent + 1)
                out += (index < members.count - 1 ? "," : "") + newline
            }
            out += closePad + "}"
        }
    }

    /// The string literal the protocol's documents write (``JSONText/appendString(_:into:)``).
    private static func quote(_ text: String, into out: inout String) {
        var bytes: [UInt8] = []
        JSONText.appendString(text, into: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }
}

/// The JSON shapes of `blob --json`. Keys are stable; new keys may be added, none removed or renamed.
package enum JSONOutput {
    /// A blob's metadata: the HTTP metadata object of docs/PROTOCOL.md (same keys, same RFC 3339
    /// millisecond dates, `image` only for images) with the store's name first:
    /// `{"store","identifier","size","contentType","etag","created","modified","metadata":{…},"image"?:{"format","width","height"}}`.
    package static func metadata(_ metadata: BlobMetadata, store: String) -> JSONValue {
        let user = metadata.userMetadata.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }
        var members: [(String, JSONValue)] = [
            ("store", .string(store)),
            ("identifier", .string(metadata.identifier)),
            ("size", .int(metadata.size)),
            ("contentType", .string(metadata.contentType)),
            ("etag", .string(metadata.etag.rawValue)),
            ("created", .string(Formatting.isoDate(metadata.created))),
            ("modified", .string(Formatting.isoDate(metadata.modified))),
            ("metadata", .object(user)),
        ]
        if let expires = metadata.expires { members.append(("expires", .string(Formatting.isoDate(expires)))) }
        if let image = metadata.image { members.append(("image", self.image(image))) }
        return .object(members)
    }

    static func image(_ image: ImageInfo) -> JSONValue {
         .object([("format", .string(image.format.rawValue)), ("width", .int(Int64(image.width))), ("height", .int(Int64(image.height)))])
    }

    /// `{"name","count","bytes"}` (`null` totals when unknown), `"maxBytes","maxCount","defaultTTL"`
    /// (`null`: no limit; seconds) when the policy is known, and `"heldBy"` when another process holds the store.
    package static func store(_ summary: StoreSummary, policy: StorePolicy? = nil) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("name", .string(summary.name)), ("count", summary.statistics.map { .int(Int64($0.count)) } ?? .null),
            ("bytes", summary.statistics.map { .int($0.bytes) } ?? .null),
        ]
        if let policy {
            fields.append(("maxBytes", policy.maximumBytes.map(JSONValue.int) ?? .null))
            fields.append(("maxCount", policy.maximumCount.map { .int(Int64($0)) } ?? .null))
            fields.append(("defaultTTL", policy.defaultTimeToLive.map { .int((PolicyJSON.milliseconds($0) + 999) / 1000) } ?? .null))
        }
        if let holder = summary.heldBy { fields.append(("heldBy", .string(holder))) }
        return .object(fields)
    }

    /// `{"store","healthy","corrupt":[{"path","identifier","reason"}],"orphaned":[…],"clean"}`.
    package static func verification(_ result: StoreVerification) -> JSONValue {
        func findings(_ list: [VerificationReport.Finding]) -> JSONValue {
            .array(list.map { finding in
                .object([
                    ("path", .string(finding.path)), ("identifier", finding.identifier.map(JSONValue.string) ?? .null),
                    ("reason", .string(finding.reason)),
                ])
            })
        }
        return .object([
            ("store", .string(result.name)), ("healthy", .int(Int64(result.report.healthy))),
            ("corrupt", findings(result.report.corrupt)), ("orphaned", findings(result.report.orphaned)),
            ("clean", .bool(result.report.isClean)),
        ] + (result.report.quarantined.map { moved in
            [("quarantined", JSONValue.array(moved.map { .object([("from", .string($0.from)), ("to", .string($0.to))]) }))]
        } ?? []))
    }

    /// One change event: `{"sequence","store","date","kind":"put"|"removed"|"removedAll","identifier"?,"blob"?}`,
    /// `blob` being the metadata object (as in the daemon's `put` events).
    package static func change(_ change: BlobChange) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("sequence", .int(Int64(clamping: change.sequence))), ("store", .string(change.store)),
            ("date", .string(Formatting.isoDate(change.date))),
        ]
        switch change.kind {
        case .put(let metadata):
            members += [("kind", .string("put")), ("identifier", .string(metadata.identifier)), ("blob", JSONOutput.metadata(metadata, store: change.store))]
        case .removed(let identifier):
            members += [("kind", .string("removed")), ("identifier", .string(identifier))]
            // Why, for a removal by the store's policy (cache mode); absent for one that was asked for.
            if change.reason == .expired { members.append(("reason", .string("expired"))) }
            if change.reason == .evicted { members.append(("reason", .string("evicted"))) }
        case .removedAll:
            members += [("kind", .string("removedAll"))]
        }
        return .object(members)
    }
}
