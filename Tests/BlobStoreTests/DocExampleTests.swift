import Foundation
import Testing

/// The Swift code the README and docs/CLIENT.md show is the code CI compiles and runs: each block
/// is, character for character, the body of a program under `Examples/` (everything after its
/// header comment), so the two cannot drift apart.
@Suite("Documented Swift code is the examples' code")
struct DocExampleTests {
    /// The package's folder (this file is `Tests/BlobStoreTests/DocExampleTests.swift`).
    static let packageFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: packageFolder.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// The ```swift blocks of a Markdown document, in order, without their fences.
    static func swiftBlocks(_ markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil {
                if line == "```swift" { current = [] }
            } else if line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current!.append(line)
            }
        }
        return blocks
    }

    /// The ```swift blocks after the heading `heading` and before the next heading of its level.
    static func swiftBlocks(_ markdown: String, section heading: String) throws -> [String] {
        let start = try #require(markdown.range(of: "\n" + heading + "\n"), "no heading '\(heading)'")
        let level = heading.prefix(while: { $0 == "#" })
        let rest = markdown[start.upperBound...]
        let end = rest.range(of: "\n" + level + " ")?.lowerBound ?? rest.endIndex
        return swiftBlocks(String(rest[..<end]))
    }

    /// An example's code after its header (the leading `//` lines and the blank lines after them).
    static func body(ofExample folder: String) throws -> String {
        let text = try read("Examples/\(folder)/main.swift")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = try #require(lines.firstIndex(where: { !$0.hasPrefix("//") && !$0.isEmpty }), "Examples/\(folder)/main.swift is empty")
        return lines[first...].joined(separator: "\n")
    }

    /// Says where two texts first differ, for a readable failure.
    static func firstDifference(_ documented: String, _ compiled: String) -> String {
        let a = documented.split(separator: "\n", omittingEmptySubsequences: false)
        let b = compiled.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(a.count, b.count) where (index < a.count ? a[index] : nil) != (index < b.count ? b[index] : nil) {
            return "line \(index + 1) of the block: documented \(index < a.count ? "'\(a[index])'" : "(end)"), compiled \(index < b.count ? "'\(b[index])'" : "(end)")"
        }
        return "identical"
    }

    @Test(
        "a documented program is its example's body",
        arguments: [
            ("README.md", "## Library quick start", 0, "QuickStart"),
            ("README.md", "## Library quick start", 1, "ArticleQuickStart"),
            ("docs/CLIENT.md", "## A complete example", 0, "ClientQuickStart"),
        ])
    func documentedProgram(document: String, heading: String, index: Int, example: String) throws {
        let blocks = try Self.swiftBlocks(Self.read(document), section: heading)
        try #require(blocks.count > index, "\(document) '\(heading)' has \(blocks.count) swift blocks")
        let compiled = try Self.body(ofExample: example)
        #expect(blocks[index] == compiled, "\(document) '\(heading)' vs Examples/\(example): \(Self.firstDifference(blocks[index], compiled))")
    }

    @Test("every Swift block of the README and docs/CLIENT.md is an example's body", arguments: ["README.md", "docs/CLIENT.md"])
    func everyBlockCompiled(document: String) throws {
        let examples = try FileManager.default.contentsOfDirectory(atPath: Self.packageFolder.appendingPathComponent("Examples").path)
        let bodies = Set(examples.compactMap { try? Self.body(ofExample: $0) })
        let blocks = Self.swiftBlocks(try Self.read(document))
        #expect(!blocks.isEmpty)
        for block in blocks {
            let compiled = bodies.contains(block)
            #expect(compiled, "a swift block of \(document) is no example's code; it begins: \(block.prefix(120))")
        }
    }
}
