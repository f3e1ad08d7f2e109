import BlobProtocol
import BlobStore

/// Help texts in swift-argument-parser's layout: OVERVIEW, USAGE, ARGUMENTS, OPTIONS, then ours.
package enum HelpText {
    /// The version `blob --version` prints.
    package static let version = "blob \(BlobStoreVersion)"

    /// How blob chooses its store (the help's and the man page's first paragraph).
    static let about = """
        With --root DIR, blob uses the store folder DIR directly (the embedded store). Otherwise it talks to \
        the daemon blobd over its Unix socket: --socket PATH, else $\(DaemonSocket.clientEnvironmentVariable), else \
        \(DaemonSocket.runtimeTemplate) (or \(DaemonSocket.fallbackTemplate) without XDG_RUNTIME_DIR). With \
        --backend s3://BUCKET[/PREFIX], it uses the stores in that S3 bucket directly, configured like the AWS CLI.
        """

    /// `blob help`.
    package static func root() -> String {
        var text = "OVERVIEW: Store, fetch, list and watch blobs in a BlobStore.\n\n"
        text += wrap(about, width: 100, indent: "") + "\n\n"
        text += "USAGE: blob [--root DIR | --socket PATH | --backend s3://BUCKET[/PREFIX]] [--json] COMMAND ...\n\nOPTIONS:\n"
        text += options(GlobalOptions.specs + [OptionSpec("version", help: "Show the version.")])
        text += "\n\nSUBCOMMANDS:\n"
        let commands = Commands.all.map { ($0.spec.name, $0.spec.abstract) } + [("help", "Show help for blob or one of its commands.")]
        text += table(commands.map { ($0.0, $0.1) })
        text += "\n\nEXIT CODES:\n"
        text += table(ExitCode.allCases.map { (String($0.rawValue), $0.summary) })
        text += """


              STORE/ID is split at the first '/': the store name ([a-z0-9][a-z0-9._-]*), then the blob's
              identifier, which may itself contain '/'. Errors go to standard error as 'blob: MESSAGE'.
              A progress line (percent, rate, ETA) appears on standard error for transfers longer than a
              second, only when standard error is a terminal.

              See 'blob help COMMAND' for detailed help.
            """
        return text
    }

    /// `blob help put` / `blob put --help`.
    package static func command(_ spec: CommandSpec) -> String {
        var text = "OVERVIEW: \(spec.abstract)\n"
        if !spec.discussion.isEmpty { text += "\n" + wrap(spec.discussion, width: 100, indent: "") + "\n" }
        text += "\nUSAGE: \(spec.usage)\n"
        if !spec.arguments.isEmpty {
            text += "\nARGUMENTS:\n" + table(spec.arguments.map { ($0.metavar, $0.help) }) + "\n"
        }
        text += "\nOPTIONS:\n" + options(spec.options + [OptionSpec("help", short: "h", help: "Show help information.")]) + "\n"
        text += "\nGLOBAL OPTIONS:\n" + options(GlobalOptions.specs.filter { $0.long != "help" }) + "\n"
        if !spec.examples.isEmpty {
            text += "\nEXAMPLES:\n" + spec.examples.map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        return text
    }

    static func options(_ specs: [OptionSpec]) -> String {
        table(specs.map { ($0.synopsis, $0.help) })
    }

    /// Two-column rows: the left column indented by 2 and padded to 24, long entries on their own line.
    static func table(_ rows: [(String, String)]) -> String {
        rows.map { left, right in
            let label = "  " + left
            if label.count >= 24 { return label + "\n" + String(repeating: " ", count: 26) + right }
            return label + String(repeating: " ", count: 26 - label.count) + right
        }.joined(separator: "\n")
    }

    /// Wraps `text` at `width` columns.
    static func wrap(_ text: String, width: Int, indent: String) -> String {
        var lines: [String] = []
        var line = indent
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.count + word.count + 1 > width && line.count > indent.count {
                lines.append(line)
                line = indent
            }
            line += (line.count > indent.count ? " " : "") + word
        }
        if line.count > indent.count { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
