import BlobStore

/// `blob verify [--repair] [STORE]`: checks blobs against their checksums (and moves what is wrong aside).
struct VerifyCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "verify",
        abstract: "Check every blob of a store (or of all stores) against its checksum.",
        discussion: """
            Reads every blob and reports how many are healthy, which files are corrupt (damaged header or \
            content) and which are orphaned (not blobs of the store, or in the wrong place). Exits with status \
            1 when anything is wrong, 0 when all is well. With --repair, every corrupt and orphaned file or \
            folder is moved into the store's quarantine/ folder (each move is listed) and the exit status is 0 \
            once all were moved; with --root, a repair waits for the store's lock like any change.
            """,
        arguments: [ArgumentSpec("STORE", help: "The store to check; all stores when absent.", optional: true)],
        options: [OptionSpec("repair", help: "Move corrupt and orphaned files and folders into STORE/quarantine/.")],
        examples: ["blob --root ~/blobs verify", "blob --json verify photos", "blob --root ~/blobs verify --repair photos"])

    let store: String?
    let repair: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        store = arguments.positionals.first
        repair = arguments.flag("repair")
        if let store { try BlobAddress.checkStore(store, command: Self.spec.name) }
    }

    func run(_ context: CommandContext) async throws {
        let results = try await context.backend.verify(store, repair: repair)
        let found = results.reduce(0) { $0 + $1.report.corrupt.count + $1.report.orphaned.count }
        let moved = results.reduce(0) { $0 + ($1.report.quarantined?.count ?? 0) }
        // A repair that moved everything it found leaves the stores clean.
        let problems = found - moved
        if context.json {
            let value = JSONValue.object([
                ("stores", .array(results.map(JSONOutput.verification))), ("clean", .bool(problems == 0)),
                ("problems", .int(Int64(problems))),
            ])
            try await context.console.print(value.serialized(pretty: true))
        } else {
            try await context.console.print(Self.text(results))
        }
        if problems > 0 { throw CLIError.problemsFound(count: problems) }
    }

    static func text(_ results: [StoreVerification]) -> String {
        guard !results.isEmpty else { return "no stores to verify" }
        var rows: [[String]] = []
        var details: [String] = []
        for result in results {
            let report = result.report
            rows.append([
                result.name, "\(Formatting.count(report.healthy)) healthy", "\(report.corrupt.count) corrupt",
                "\(report.orphaned.count) orphaned", report.isClean ? "ok" : "PROBLEMS",
            ])
            for finding in report.corrupt { details.append(describe("corrupt", finding, store: result.name)) }
            for finding in report.orphaned { details.append(describe("orphaned", finding, store: result.name)) }
            for entry in report.quarantined ?? [] { details.append("  quarantined: \(entry.from) -> \(entry.to)") }
        }
        let table = Formatting.columns(rows, alignments: [.left, .right, .right, .right, .left])
        return details.isEmpty ? table : table + "\n" + details.joined(separator: "\n")
    }

    private static func describe(_ kind: String, _ finding: VerificationReport.Finding, store: String) -> String {
        let blob = finding.identifier.map { " (blob \(store)/\($0))" } ?? ""
        return "  \(kind): \(finding.path)\(blob): \(finding.reason)"
    }
}
