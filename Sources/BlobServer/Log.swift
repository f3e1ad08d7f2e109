#if canImport(Glibc)
import Glibc
#endif

/// Writes the daemon's log lines to file descriptor 2: `blobd: MESSAGE`, or with ``LogFormat/json``
/// one object per line (`{"time":…,"level":…,"msg":…}`). The global `stderr` is not usable from
/// nonisolated code in Swift 6, and one `write` per line keeps lines from different threads from
/// interleaving.
package struct Log: Sendable {
    /// Lines above this level are dropped.
    package let level: LogLevel
    /// How lines are written.
    package let format: LogFormat

    /// Creates a logger that prints lines up to `level`, in `format`.
    package init(level: LogLevel, format: LogFormat = .text) {
        self.level = level
        self.format = format
    }

    /// Whether lines at `level` are printed (so callers can skip building them).
    @inline(__always)
    package func enabled(_ level: LogLevel) -> Bool { level <= self.level }

    /// Prints `message` if `level` is enabled.
    package func callAsFunction(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard enabled(level) else { return }
        emit(level, message())
    }

    /// Prints `message` whatever the configured level (the line saying where the daemon listens).
    package func always(_ level: LogLevel, _ message: String) {
        emit(level, message)
    }

    private func emit(_ level: LogLevel, _ message: String) {
        switch format {
        case .text:
            Log.write("blobd: " + message)
        case .json:
            var line: [UInt8] = []
            line.reserveCapacity(message.utf8.count + 64)
            line.append(contentsOf: #"{"time":""#.utf8)
            var timestamp = LogTimestamp()
            timestamp.append(into: &line)
            line.append(contentsOf: #"","level":""#.utf8)
            line.append(contentsOf: level.name.utf8)
            line.append(contentsOf: #"","msg":""#.utf8)
            LogJSON.appendEscaped(message.utf8, into: &line)
            line.append(contentsOf: "\"}\n".utf8)
            Log.write(bytes: line, to: 2)
        }
    }

    /// Writes `line` and a newline to stderr whatever the level and format (usage errors, found
    /// before the format is known).
    package static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        write(bytes: bytes, to: 2)
    }

    /// Writes all of `bytes` to `fd` in as few `write`s as the kernel allows (one, for a line to a
    /// file or a pipe); gives up silently on an error: a log line is not worth stopping for.
    static func write(bytes: [UInt8], to fd: Int32) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }
}
