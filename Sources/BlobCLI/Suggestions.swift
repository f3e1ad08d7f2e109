/// "Did you mean …?" for mistyped command and option names, as git and swift-argument-parser do.
enum Suggestions {
    /// The candidates closest to `word` (ties all returned, in the candidates' order), or none when
    /// even the closest is too far to be a typo: more than 2 edits, or as many edits as `word` has
    /// characters (`x` is not a typo of `ls`). Failing that, the candidates `word` abbreviates
    /// (`comp` → `completion`), if it has 3 characters or more.
    static func closest(to word: String, among candidates: [String]) -> [String] {
        let scored = candidates.map { ($0, distance(word, $0)) }
        guard let best = scored.map(\.1).min() else { return [] }
        guard best > 0, best <= 2, best < word.count else {
            guard word.count >= 3, best > 0 else { return [] }
            return candidates.filter { $0.hasPrefix(word) }
        }
        var seen = Set<String>()
        return scored.filter { $0.1 == best && seen.insert($0.0).inserted }.map(\.0)
    }

    /// ` Did you mean 'ls'?` (or `'put' or 'get'`), or "" when nothing is close; `prefix` is put
    /// before each name (`--` for options).
    static func hint(for word: String, among candidates: [String], prefix: String = "") -> String {
        let names = closest(to: word, among: candidates).map { "'\(prefix)\($0)'" }
        guard !names.isEmpty else { return "" }
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
        return ". Did you mean \(list)?"
    }

    /// Edit distance counting insertions, deletions, substitutions and swaps of neighbours
    /// (optimal string alignment), over characters.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, before[j - 2] + 1) }
                current[j] = value
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
