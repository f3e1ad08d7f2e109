import Foundation

/// docs/PROTOCOL.md, the contract these tests hold the vocabulary to.
enum ProtocolDocument {
    static let text: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)) ?? ""
    }()

    /// The lines of the section whose heading is `heading` (up to the next heading of its level or above).
    static func section(_ heading: String) -> [Substring] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else { return [] }
        let level = heading.prefix(while: { $0 == "#" }).count
        var end = start + 1
        while end < lines.count {
            let hashes = lines[end].prefix(while: { $0 == "#" }).count
            if hashes > 0 && hashes <= level && lines[end].dropFirst(hashes).hasPrefix(" ") { break }
            end += 1
        }
        return Array(lines[(start + 1)..<end])
    }

    /// The cells of the table rows (not the header or the rule) in `lines`.
    static func tableRows(_ lines: [Substring]) -> [[String]] {
        let rows = lines.filter { $0.hasPrefix("|") }.map { line in
            line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return Array(rows.dropFirst(2))
    }

    /// The `code spans` in `text`.
    static func codeSpans(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}
