/// How much the daemon writes to stderr.
package enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Only failures.
    case error
    /// Start-up, shutdown and refused peers (the default).
    case info
    /// Also one access-log line per request on stderr, unless `--access-log` says otherwise.
    case debug

    /// Parses `error`, `info` or `debug`.
    package init?(name: String) {
        switch name {
        case "error": self = .error
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }

    /// The level's name, as `--log-level` takes it and JSON log lines show it.
    package var name: String {
        switch self {
        case .error: "error"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// Orders by verbosity.
    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
