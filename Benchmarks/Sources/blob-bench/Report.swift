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
    /// Median over repetitions of each run's median request latency (runs that time requests only).
    var p50Microseconds: Double? = nil
    /// Median over repetitions of each run's 99th-percentile request latency.
    var p99Microseconds: Double? = nil
}

/// A single measured figure that is not a rate of operations: a start-up time, a peak RSS, a thread count.
struct Figure: Codable, Sendable {
    /// What was measured, e.g. `daemon peak RSS while a 4 GiB blob streams in`.
    var name: String
    var value: Double
    /// `ms`, `MiB`, `threads`, `×` …
    var unit: String
    /// The issue's target for it, as text (e.g. `≤ 64 MiB`), if there is one.
    var target: String? = nil
    /// Whether the target was met, if there is one.
    var met: Bool? = nil
}

/// A store variant against its baselines: medians of the per-repetition ratios, with their range.
struct ComparisonResult: Codable, Sendable {
    var store: String
    var raw: String?
    var article: String?
    var peer: String? = nil
    var storeOverRaw: Stats.Summary?
    var storeOverArticle: Stats.Summary?
    var storeOverPeer: Stats.Summary? = nil
}

/// Everything measured for one case of one scenario.
struct CaseResult: Codable, Sendable {
    var scenario: String
    /// Usually the blob size, e.g. `4 KiB`.
    var label: String
    var blobBytes: Int?
    var variants: [VariantResult]
    var comparisons: [ComparisonResult]
    /// Figures that are not rates (scale and memory scenarios).
    var figures: [Figure] = []
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

    /// The table printed at the end of a run: one row per store variant and its baselines, then the
    /// figures that are not rates.
    func table() -> String {
        let hasPeers = cases.contains { $0.comparisons.contains { $0.peer != nil } }
        let hasLatency = cases.contains { $0.variants.contains { $0.p50Microseconds != nil } }
        var header = ["scenario", "blob", "variant", "store ops/s", "MiB/s", "raw ops/s", "article ops/s", "store/raw", "store/article"]
        if hasPeers { header += ["peer ops/s", "store/peer"] }
        if hasLatency { header += ["p50/p99 µs", "peer p50/p99 µs"] }
        var rows: [[String]] = []
        for result in cases {
            for comparison in result.comparisons {
                guard let store = result.variants.first(where: { $0.name == comparison.store }) else { continue }
                let raw = result.variants.first { $0.name == comparison.raw }
                let article = result.variants.first { $0.name == comparison.article }
                let peer = result.variants.first { $0.name == comparison.peer }
                let mib = result.blobBytes.map { Report.compact(store.opsPerSecond * Double($0) / 1_048_576) } ?? "-"
                var row = [
                    result.scenario, result.label, store.name, Report.compact(store.opsPerSecond), result.scenario == "list" ? "-" : mib,
                    raw.map { "\(Report.compact($0.opsPerSecond)) (\($0.name))" } ?? "-",
                    article.map { "\(Report.compact($0.opsPerSecond)) (\($0.name))" } ?? "-",
                    Report.ratio(comparison.storeOverRaw), Report.ratio(comparison.storeOverArticle),
                ]
                if hasPeers {
                    row += [peer.map { "\(Report.compact($0.opsPerSecond)) (\($0.name))" } ?? "-", Report.ratio(comparison.storeOverPeer)]
                }
                if hasLatency { row += [Report.latency(store), peer.map(Report.latency) ?? "-"] }
                rows.append(row)
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
        var text = ""
        if !rows.isEmpty {
            text += line(header) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
            for row in rows { text += line(row) + "\n" }
        }
        let figures = cases.flatMap { result in result.figures.map { (result.scenario, $0) } }
        if !figures.isEmpty {
            text += "\n"
            let nameWidth = figures.map { $0.0.count + 2 + $0.1.name.count }.max() ?? 0
            for (scenario, figure) in figures {
                let name = "\(scenario): \(figure.name)"
                var entry = name + String(repeating: " ", count: nameWidth - name.count) + "  " + Report.compact(figure.value) + " " + figure.unit
                if let target = figure.target {
                    entry += "  (target \(target)\(figure.met.map { $0 ? ": met" : ": MISSED" } ?? ""))"
                }
                text += entry + "\n"
            }
        }
        text += """
            ops/s: median of \(environment.repetitions) repetitions, variants interleaved. Ratios: median of per-repetition \
            ratios [lowest–highest]. list: 1 op = one listing of all 10,000 blobs. File creation probe at start: \
            \(Report.compact(environment.createsPerSecond))/s\(environment.createsPerSecond < CreateProbe.slowThreshold ? " (SLOW: see warning)" : "").

            """
        return text
    }

    /// `85/210`, or `-` when the variant did not time its requests.
    static func latency(_ variant: VariantResult) -> String {
        guard let p50 = variant.p50Microseconds, let p99 = variant.p99Microseconds else { return "-" }
        return "\(compact(p50))/\(compact(p99))"
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
