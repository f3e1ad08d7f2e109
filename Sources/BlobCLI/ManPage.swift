import BlobProtocol
import BlobStore

/// Manual pages in roff (`man 7 groff_man`), generated from the help texts: `blob help --man`
/// writes blob(1) from the ``CommandSpec``s; `blobd --help | blob help --man blobd` turns blobd's
/// help text into blobd(8).
enum ManPage {
    /// blob(1).
    static func blob() -> String {
        var page = header(name: "blob", section: 1, summary: "store, fetch, list and watch blobs in a BlobStore")
        page += ".SH SYNOPSIS\n.B blob\n" + escape("[--root DIR | --socket PATH] [--json] COMMAND ...") + "\n"
        page += ".SH DESCRIPTION\n" + escape(HelpText.about) + "\n.PP\n"
        page += escape("STORE/ID is split at the first '/': the store name, then the blob's identifier, which may itself contain '/'.") + "\n"
        page += ".SH OPTIONS\n" + options(GlobalOptions.specs + [OptionSpec("version", help: "Show the version.")])
        page += ".SH COMMANDS\n"
        for command in Commands.all {
            let spec = command.spec
            page += ".SS \(escape(spec.name))\n.B \(escape(spec.usage))\n.PP\n\(escape(spec.abstract))\n"
            if !spec.discussion.isEmpty { page += ".PP\n" + escape(spec.discussion) + "\n" }
            for argument in spec.arguments { page += ".TP\n.I \(escape(argument.metavar))\n\(escape(argument.help))\n" }
            page += options(spec.options)
            if !spec.examples.isEmpty {
                page += ".PP\nExamples:\n.RS\n.nf\n" + spec.examples.map(escape).joined(separator: "\n") + "\n.fi\n.RE\n"
            }
        }
        page += ".SS help\n.B blob help [COMMAND] [--man]\n.PP\nShow help for blob or one of its commands; with --man, this page.\n"
        page += ".SH EXIT STATUS\n"
        for code in ExitCode.allCases { page += ".TP\n.B \(code.rawValue)\n\(escape(code.summary))\n" }
        page += ".SH ENVIRONMENT\n"
        page += ".TP\n.B BLOB_SOCKET\n\(escape("The daemon's socket when --socket is not given."))\n"
        page += ".TP\n.B BLOB_WAIT\n\(escape("With --root, how many seconds to wait for another process to release a store when --wait is not given (default 10)."))\n"
        page += ".TP\n.B XDG_RUNTIME_DIR\n\(escape("The default socket is \(DaemonSocket.runtimeTemplate) (\(DaemonSocket.fallbackTemplate) without it)."))\n"
        page += ".SH SEE ALSO\n.BR blobd (8)\n"
        return page
    }

    /// A page for a daemon from its `--help` text: `usage: NAME …` (continued on indented lines),
    /// one line saying what it does, then options as `  --name [VALUE]  help`.
    static func fromDaemonHelp(_ text: String, name: String, section: Int = 8) -> String {
        var usage: [String] = []
        var description: [String] = []
        var options: [(String, String)] = []
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) {
            let line = raw.trimmingSpaces
            if line.hasPrefix("usage:") {
                usage.append(String(line.dropFirst(6)).trimmingSpaces)
            } else if raw.hasPrefix(" ") && line.hasPrefix("[") && !usage.isEmpty && description.isEmpty {
                usage.append(line)
            } else if line.hasPrefix("-") {
                // `--flag VALUE  help`: a value is one upper-case word.
                let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                var synopsis = words[0]
                var rest = words.dropFirst()
                if let value = rest.first, value.allSatisfy({ $0.isUppercase || $0 == "_" }) {
                    synopsis += " " + value
                    rest = rest.dropFirst()
                }
                options.append((synopsis, rest.joined(separator: " ")))
            } else if let last = options.indices.last, raw.hasPrefix("      ") {
                options[last].1 += " " + line
            } else {
                description.append(line)
            }
        }
        let summary = description.first.map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 } ?? name
        var page = header(name: name, section: section, summary: summary.prefix(1).lowercased() + summary.dropFirst())
        let synopsis = usage.joined(separator: " ")
        let arguments = synopsis.hasPrefix(name) ? String(synopsis.dropFirst(name.count)).trimmingSpaces : synopsis
        page += ".SH SYNOPSIS\n.B \(escape(name))\n\(escape(arguments))\n"
        page += ".SH DESCRIPTION\n" + escape(description.joined(separator: " ")) + "\n"
        page += ".SH OPTIONS\n"
        for (synopsis, help) in options { page += ".TP\n.B \(escape(synopsis))\n\(escape(help))\n" }
        page += ".SH SEE ALSO\n.BR blob (1)\n"
        return page
    }

    private static func header(name: String, section: Int, summary: String) -> String {
        ".\\\" Generated from the help text by 'blob help --man'; do not edit.\n"
            + ".TH \(name.uppercased()) \(section) \"\" \"BlobStore \(BlobStoreVersion)\" \"\(section == 1 ? "User Commands" : "System Administration")\"\n"
            + ".SH NAME\n\(escape(name)) \\- \(escape(summary))\n"
    }

    private static func options(_ specs: [OptionSpec]) -> String {
        specs.map { ".TP\n.B \(escape($0.synopsis))\n\(escape($0.help))\n" }.joined()
    }

    /// Text safe in a roff line: backslashes as `\e`, dashes as `\-`, and a leading `.` or `'` guarded.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            default: out.append(character)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out.replacingAll("\n.", with: "\n\\&.").replacingAll("\n'", with: "\n\\&'")
    }
}

extension String {
    /// Without leading and trailing spaces.
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
