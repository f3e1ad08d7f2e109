/// The canonical request of Signature V4 for S3: method, canonical URI, canonical query string,
/// canonical headers, signed headers and hashed payload, one per line.
package struct CanonicalRequest: Sendable, Hashable {
    /// The whole canonical request, the text that is hashed into the string to sign.
    package let text: String
    /// The lowercased names of the signed headers, sorted and joined by `;`.
    package let signedHeaders: String

    /// The canonical form of `request`.
    package init(_ request: S3Request) {
        let headers = Self.canonicalHeaders(request.headers)
        signedHeaders = headers.map(\.name).joined(separator: ";")
        var text = request.method
        text += "\n"
        text += S3URIEncoding.encodePath(request.path)
        text += "\n"
        text += Self.canonicalQuery(request.queryItems)
        text += "\n"
        for header in headers {
            text += header.name
            text += ":"
            text += header.value
            text += "\n"
        }
        text += "\n"
        text += signedHeaders
        text += "\n"
        text += request.payload.headerValue
        self.text = text
    }

    /// `name=value` pairs, each part encoded, sorted by encoded name then encoded value, joined by `&`.
    package static func canonicalQuery(_ items: [S3QueryItem]) -> String {
        sortedEncodedQuery(items).map { $0.name + "=" + $0.value }.joined(separator: "&")
    }

    /// The query items encoded and in canonical order (byte order of the encoded forms).
    static func sortedEncodedQuery(_ items: [S3QueryItem]) -> [(name: String, value: String)] {
        items.map { (name: S3URIEncoding.encodeQueryComponent($0.name), value: S3URIEncoding.encodeQueryComponent($0.value)) }
            .sorted { left, right in
                if left.name != right.name { return left.name.utf8.lexicographicallyPrecedes(right.name.utf8) }
                return left.value.utf8.lexicographicallyPrecedes(right.value.utf8)
            }
    }

    /// Lowercased names, sorted; values trimmed with inner runs of spaces collapsed; the values of
    /// repeated names joined by `,` in the order they were given.
    static func canonicalHeaders(_ headers: [S3HeaderField]) -> [(name: String, value: String)] {
        var merged: [String: String] = [:]
        var order: [String] = []
        for header in headers {
            let name = header.name.lowercased()
            let value = trimmedValue(header.value)
            if let existing = merged[name] {
                merged[name] = existing + "," + value
            } else {
                merged[name] = value
                order.append(name)
            }
        }
        return order.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { (name: $0, value: merged[$0]!) }
    }

    /// The value without leading and trailing whitespace, each inner run of spaces and tabs one space.
    static func trimmedValue(_ value: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(value.utf8.count)
        var pendingSpace = false
        for byte in value.utf8 {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                pendingSpace = !output.isEmpty
                continue
            }
            if pendingSpace {
                output.append(UInt8(ascii: " "))
                pendingSpace = false
            }
            output.append(byte)
        }
        return String(decoding: output, as: UTF8.self)
    }
}
