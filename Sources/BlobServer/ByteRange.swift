/// A single `Range: bytes=…` request (RFC 9110 §14), resolved against a blob's size.
enum ByteRange: Equatable {
    /// Malformed, multi-range or not bytes: serve the whole blob (RFC 9110 allows ignoring Range).
    case ignore
    /// No byte of the range exists: 416.
    case unsatisfiable
    /// Serve these bytes with 206.
    case satisfiable(Range<Int64>)

    /// Parses `bytes=a-b`, `bytes=a-` or `bytes=-n`.
    static func parse(_ header: String, size: Int64) -> ByteRange {
        let text = header.trimmingPrefixWhitespace
        guard text.hasPrefix("bytes="), !text.contains(",") else { return .ignore }
        let spec = text.dropFirst("bytes=".count)
        guard let dash = spec.firstIndex(of: "-") else { return .ignore }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = Int64(last), suffix >= 0 else { return .ignore }
            if suffix == 0 || size == 0 { return .unsatisfiable }
            return .satisfiable(max(0, size - suffix)..<size)
        }
        guard let start = Int64(first), start >= 0 else { return .ignore }
        var end = size - 1
        if !last.isEmpty {
            guard let value = Int64(last), value >= start else { return .ignore }
            end = min(value, size - 1)
        }
        if start >= size { return .unsatisfiable }
        return .satisfiable(start..<(end + 1))
    }
}

extension String {
    fileprivate var trimmingPrefixWhitespace: Substring { drop(while: { $0 == " " || $0 == "\t" }) }
}
