/// How `blobd` writes its log lines (`--log-format`).
package enum LogFormat: String, Sendable, Hashable, CaseIterable {
    /// Plain lines: `blobd: MESSAGE` on stderr, and space-separated fields in the access log.
    case text
    /// One JSON object per line, with a `time` (RFC 3339, UTC, milliseconds), a `level` and a `msg`.
    case json
}

/// Where the access log (one line per request) goes (`--access-log`).
package enum AccessLogDestination: Sendable, Hashable {
    /// No access log.
    case off
    /// File descriptor 2, mixed with the other log lines.
    case stderr
    /// A file opened for appending (created with mode 0640 if missing).
    case file(String)

    /// Parses `off`, `stderr` or a path (relative paths are taken from `currentDirectory`).
    package init?(argument: String, currentDirectory: String) {
        switch argument {
        case "": return nil
        case "off": self = .off
        case "stderr": self = .stderr
        default: self = .file(argument.hasPrefix("/") ? argument : currentDirectory + "/" + argument)
        }
    }
}
