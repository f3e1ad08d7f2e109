import BlobStore

/// `STORE/ID`: split at the first `/` into a store name and an identifier (which may contain `/`).
package struct BlobAddress: Sendable, Hashable, CustomStringConvertible {
    package var store: String
    package var identifier: String

    package init(store: String, identifier: String) {
        self.store = store
        self.identifier = identifier
    }

    /// Parses and checks `STORE/ID`; usage errors name what is wrong.
    package static func parse(_ text: String, command: String) throws(UsageError) -> BlobAddress {
        guard !text.isEmpty else { throw UsageError("missing STORE/ID", command: command) }
        guard let slash = text.firstIndex(of: "/") else {
            throw UsageError("'\(text)' has no identifier (expected STORE/ID)", command: command)
        }
        let store = String(text[..<slash])
        let identifier = String(text[text.index(after: slash)...])
        try checkStore(store, command: command)
        guard !identifier.isEmpty else {
            throw UsageError("'\(text)' has no identifier after the store name (expected STORE/ID)", command: command)
        }
        if let rule = BlobIdentifier.violation(in: identifier) {
            throw UsageError("invalid identifier: \(rule)", command: command)
        }
        return BlobAddress(store: store, identifier: identifier)
    }

    /// Checks a store name given on the command line.
    package static func checkStore(_ store: String, command: String) throws(UsageError) {
        if store.isEmpty { throw UsageError("missing store name", command: command) }
        if let reason = StoreName.violation(in: store) {
            throw UsageError("invalid store name '\(store)': \(reason)", command: command)
        }
    }

    package var description: String { store + "/" + identifier }
}

/// Parsers for option values; each failure is a ``UsageError`` naming the option.
enum ValueParsing {
    static func etag(_ text: String, option: String, command: String) throws(UsageError) -> ETag {
        guard let tag = ETag(text) else {
            throw UsageError("'\(text)' is not an ETag for '--\(option)' (expected 16 lowercase hex digits)", command: command)
        }
        return tag
    }

    /// `key=value` pairs; a key given twice is an error.
    static func metadata(_ pairs: [String], command: String) throws(UsageError) -> [String: String] {
        var result: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "=") else {
                throw UsageError("'--meta \(pair)' needs the form key=value", command: command)
            }
            let key = String(pair[..<equals])
            guard !key.isEmpty else { throw UsageError("'--meta \(pair)' has an empty key", command: command) }
            guard result[key] == nil else { throw UsageError("'--meta' key '\(key)' given twice", command: command) }
            result[key] = String(pair[pair.index(after: equals)...])
        }
        return result
    }

    static func integer(_ text: String, option: String, in range: ClosedRange<Int>, command: String) throws(UsageError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("'--\(option)' must be a whole number in \(range.lowerBound)...\(range.upperBound) (got '\(text)')", command: command)
        }
        return value
    }

    static func sort(_ text: String, command: String) throws(UsageError) -> ListQuery.Sort {
        guard let sort = ListQuery.Sort(rawValue: text) else {
            let choices = ListQuery.Sort.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("'--sort' must be one of \(choices) (got '\(text)')", command: command)
        }
        return sort
    }
}

/// A byte range as given to `--range`: `A-B` (bytes A through B, inclusive, as in HTTP), `A-` (from A
/// to the end) or `-N` (the last N bytes).
package enum ByteRangeSpec: Sendable, Hashable {
    case closed(Int64, Int64)
    case from(Int64)
    case suffix(Int64)

    package static func parse(_ text: String, command: String) throws(UsageError) -> ByteRangeSpec {
        let bad = UsageError("'--range \(text)' must be A-B, A- or -N with whole byte offsets, A ≤ B", command: command)
        guard let dash = text.firstIndex(of: "-") else { throw bad }
        let left = text[..<dash], right = text[text.index(after: dash)...]
        func number(_ part: Substring) -> Int64? {
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int64(part)
        }
        switch (left.isEmpty, right.isEmpty) {
        case (true, true):
            throw bad
        case (true, false):
            guard let count = number(right), count > 0 else { throw bad }
            return .suffix(count)
        case (false, true):
            guard let start = number(left) else { throw bad }
            return .from(start)
        case (false, false):
            guard let start = number(left), let end = number(right), start <= end, end < Int64.max else { throw bad }
            return .closed(start, end)
        }
    }

    /// The half-open range for a blob of `size` bytes (before the store clamps it).
    package func resolved(size: Int64) -> Range<Int64> {
        switch self {
        case .closed(let start, let end): return start..<(end + 1)
        case .from(let start): return start..<Int64.max
        case .suffix(let count): return max(0, size - count)..<size
        }
    }

    /// Whether resolving needs the blob's size first.
    var needsSize: Bool {
        switch self {
        case .closed, .from: return false
        case .suffix: return true
        }
    }
}
