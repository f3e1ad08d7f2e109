import Foundation
import Glibc

/// One variant's throughput in one case.
struct VariantResult: Codable, Sendable {
    var name: String
    var kind: Variant.Kind
    var concurrency: Int
    /// Operations per timed run.
    var operations: Int
    /// Median over repetitions.
    var opsPerSecond: Double
    /// Every repetition, in order.
    var samples: [Double]
}

/// A store variant against its baselines: medians of the per-repetition ratios, with their range.
struct ComparisonResult: Codable, Sendable {
    var store: String
    var raw: String?
    var article: String?
    var storeOverRaw: Stats.Summary?
    var storeOverArticle: Stats.Summary?
}

/// Everything measured for one case of one scenario.
struct CaseResult: Codable, Sendable {
    var scenario: String
    /// Usually the blob size, e.g. `4 KiB`.
    var label: String
    var blobBytes: Int?
    var variants: [VariantResult]
    var comparisons: [ComparisonResult]
}

/// The whole run, as written by `--json`.
struct Report: Codable, Sendable {
    /// Where and how it ran.
    struct Environment: Codable, Sendable {
        var date: String
        var host: String
        var processors: Int
        var memoryBytes: UInt64
        var directory: String
        var quick: Bool
        var repetitions: Int
        var command: String
        /// Empty files created per second at the start (see ``CreateProbe``).
        var createsPerSecond: Double
    }

    var environment: Environment
    var cases: [CaseResult]

    /// The table printed at the end of a run: one row per store variant and its baselines.
    func table() -> String {
        let header = ["scenario", "blob", "variant", "store ops/s", "MiB/s", "raw ops/s", "article ops/s", "store/raw", "store/article"]
        var rows: [[String]] = []
        for result in cases {
            for comparison in result.comparisons {
                guard let store = result.variants.first(where: { $0.name == comparison.store }) else { continue }
                let raw = result.variants.first { $0.name == comparison.raw }
                let article = result.variants.first { $0.name == comparison.article }
                let mib = result.blobBytes.map { Report.compact(store.opsPerSecond * Double($0) / 1_048_576) } ?? "-"
                rows.append([
                    result.scenario, result.label, store.name, Report.compact(store.opsPerSecond), result.scenario == "list" ? "-" : mib,
                    raw.map { "\(Report.compact($0.opsPerSecond)) (\($0.name))" } ?? "-",
                    article.map { "\(Report.compact($0.opsPerSecond)) (\($0.name))" } ?? "-",
                    Report.ratio(comparison.storeOverRaw), Report.ratio(comparison.storeOverArticle),
                ])
            }
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                // Names left-aligned, figures right-aligned.
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column < 3 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        var text = line(header) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in rows { text += line(row) + "\n" }
        text += """
            ops/s: median of \(environment.repetitions) repetitions, variants interleaved. Ratios: median of per-repetition \
            ratios [lowest–highest]. list: 1 op = one listing of all 10,000 blobs. File creation probe at start: \
            \(Report.compact(environment.createsPerSecond))/s\(environment.createsPerSecond < CreateProbe.slowThreshold ? " (SLOW: see warning)" : "").

            """
        return text
    }

    /// The report as pretty-printed JSON.
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// `0.85 [0.80–0.91]`, or `-`.
    static func ratio(_ summary: Stats.Summary?) -> String {
        guard let summary else { return "-" }
        return "\(fixed(summary.median)) [\(fixed(summary.low))–\(fixed(summary.high))]"
    }

    /// Two decimals.
    static func fixed(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// Three significant figures with a k/M suffix: `41.2k`, `512`, `1.23M`, `7.41`.
    static func compact(_ value: Double) -> String {
        func sig(_ x: Double) -> String {
            if x >= 100 { return String(Int(x.rounded())) }
            if x >= 10 { return String(Double(Int((x * 10).rounded())) / 10) }
            return String(Double(Int((x * 100).rounded())) / 100)
        }
        if value >= 999_500 { return sig(value / 1_000_000) + "M" }
        if value >= 999.5 { return sig(value / 1000) + "k" }
        return sig(value)
    }
}

/// Progress and errors go to standard error (file descriptor 2), so standard output holds only the table.
enum Console {
    /// Writes one line to standard error.
    static func progress(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
