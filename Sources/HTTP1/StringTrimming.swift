extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace); byte by byte,
    /// where Foundation's `trimmingCharacters(in:)` builds a character set on every call.
    package func trimmingSpaces() -> SubSequence {
        var start = startIndex
        var end = endIndex
        while start < end, self[start] == " " || self[start] == "\t" { start = index(after: start) }
        while end > start, self[index(before: end)] == " " || self[index(before: end)] == "\t" { end = index(before: end) }
        return self[start..<end]
    }
}
