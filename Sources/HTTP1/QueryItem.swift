/// One `name=value` pair of a query string, decoded.
package struct QueryItem: Sendable, Hashable, CustomStringConvertible {
    /// The decoded name.
    package var name: String
    /// The decoded value; empty for `name` and `name=`.
    package var value: String

    /// Creates a pair.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `name=value`, decoded, for debugging.
    package var description: String { "\(name)=\(value)" }

    /// Splits a query (without its `?`) into pairs, in order.
    ///
    /// Pairs are separated by `&`; empty pairs are skipped; a pair without `=` has an empty value.
    /// `%XX` decodes to its byte; `+` stays `+` (it is not a space: that is HTML form encoding, not
    /// URI syntax, so a client sends a space as `%20`). Decoded bytes that are not UTF-8 become U+FFFD.
    ///
    /// - Throws: ``PercentDecodingError`` for a malformed escape or an encoded NUL.
    package static func parse(_ query: String) throws(PercentDecodingError) -> [QueryItem] {
        try parse(ArraySlice(query.utf8))
    }

    /// Splits query bytes (without the `?`) into decoded pairs; see ``parse(_:)-(String)``.
    package static func parse(_ query: ArraySlice<UInt8>) throws(PercentDecodingError) -> [QueryItem] {
        var items: [QueryItem] = []
        var scratch: [UInt8] = []
        var start = query.startIndex
        while start < query.endIndex {
            let end = query[start...].firstIndex(of: ASCII.ampersand) ?? query.endIndex
            if end > start {
                let pair = query[start..<end]
                let equals = pair.firstIndex(of: ASCII.equals) ?? end
                let name = try decodeComponent(pair[start..<equals], scratch: &scratch)
                let value = equals < end ? try decodeComponent(pair[(equals + 1)...], scratch: &scratch) : ""
                items.append(QueryItem(name: name, value: value))
            }
            start = end + 1
        }
        return items
    }

    private static func decodeComponent(
        _ component: ArraySlice<UInt8>, scratch: inout [UInt8]
    ) throws(PercentDecodingError) -> String {
        scratch.removeAll(keepingCapacity: true)
        // withUnsafeBytes rethrows untyped errors, so carry the typed result out of the closure.
        let result = component.withUnsafeBytes { raw in
            Result { () throws(PercentDecodingError) in
                try PercentEncoding.decode(raw, into: &scratch)
            }
        }
        try result.get()
        return String(decoding: scratch, as: UTF8.self)
    }
}
