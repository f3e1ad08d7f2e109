#if canImport(Glibc)
import Glibc
#endif

/// Writes lines to file descriptor 2. The global `stderr` is not usable from nonisolated code in
/// Swift 6, and one `write` per line keeps lines from different threads from interleaving.
public struct Log: Sendable {
    /// Lines above this level are dropped.
    public let level: LogLevel

    /// Creates a logger that prints lines up to `level`.
    public init(level: LogLevel) { self.level = level }

    /// Whether lines at `level` are printed (so callers can skip building them).
    @inline(__always)
    public func enabled(_ level: LogLevel) -> Bool { level <= self.level }

    /// Prints `message` if `level` is enabled.
    public func callAsFunction(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard enabled(level) else { return }
        Log.write("blobd: " + message())
    }

    /// Writes `line` and a newline to stderr whatever the level.
    public static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }
}
