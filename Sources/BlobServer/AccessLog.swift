import BlobSystem
import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// Where access-log lines go, shared by the event loops. Each line leaves in one `write`: a file is
/// opened `O_APPEND`, so lines from different loops never interleave (and `logrotate`'s
/// `copytruncate` works); on a pipe, lines up to `PIPE_BUF` (4096 bytes) are atomic.
final class AccessLog: Sendable {
    /// The descriptor written to: 2, or the file's.
    let descriptor: Int32
    /// How lines are written.
    let format: LogFormat
    private let ownsDescriptor: Bool
    /// The file's path, for ``reopen()``; `nil` for stderr.
    let path: String?

    private init(descriptor: Int32, format: LogFormat, ownsDescriptor: Bool, path: String? = nil) {
        self.descriptor = descriptor
        self.format = format
        self.ownsDescriptor = ownsDescriptor
        self.path = path
    }

    /// Opens the file's path again and puts it in place of the old file (after `logrotate` renamed
    /// it). `dup2` swaps the file under the same descriptor number in one step, so the loops, which
    /// keep writing to ``descriptor``, need no lock: a batch goes wholly to the old file or the new.
    /// - Throws: ``Errno`` when the path cannot be opened (the old file stays in use).
    func reopen() throws(Errno) {
        guard let path else { return }
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        defer { _ = Glibc.close(fd) }
        guard dup2(fd, descriptor) >= 0 else { throw Errno(rawValue: errno) }
        // dup2 clears close-on-exec (dup3, which keeps it, is not in Glibc's Swift overlay); blobd
        // starts no programs, so the moment without it does not matter.
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    /// Opens `destination`; `nil` for ``AccessLogDestination/off``.
    /// - Throws: ``StartupError`` naming the path and errno when the file cannot be opened.
    static func open(_ destination: AccessLogDestination, format: LogFormat) throws -> AccessLog? {
        switch destination {
        case .off:
            return nil
        case .stderr:
            return AccessLog(descriptor: 2, format: format, ownsDescriptor: false)
        case .file(let path):
            let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
            guard fd >= 0 else {
                throw StartupError("cannot open access log \(path): \(Errno(rawValue: errno))")
            }
            return AccessLog(descriptor: fd, format: format, ownsDescriptor: true, path: path)
        }
    }

    deinit { if ownsDescriptor { _ = Glibc.close(descriptor) } }
}

/// One event loop's access-log line builder: the line is assembled in a buffer reused for every
/// request, without `String` or Foundation formatting. Lines are batched: the loop calls ``flush()``
/// once per epoll wake-up, so a busy loop pays one `write` per batch of requests rather than one
/// per request. A batch is kept to whole lines of at most ``batchLimit`` bytes, so that on a pipe
/// (stderr to the journal) each `write` is atomic and lines from different loops never mix. Owned
/// by its loop and used only on the loop's thread.
struct AccessLogWriter {
    /// `PIPE_BUF`: the largest write a pipe takes atomically.
    static let batchLimit = 4096
    /// The shared destination.
    let sink: AccessLog
    private var line: [UInt8] = []
    private var pending: [UInt8] = []
    private var timestamp = LogTimestamp()

    init(sink: AccessLog) {
        self.sink = sink
        line.reserveCapacity(512)
        pending.reserveCapacity(AccessLogWriter.batchLimit)
    }

    /// Whether lines wait for ``flush()``.
    var hasPending: Bool { !pending.isEmpty }

    /// Writes the batched lines (one `write`).
    mutating func flush() {
        guard !pending.isEmpty else { return }
        Log.write(bytes: pending, to: sink.descriptor)
        pending.removeAll(keepingCapacity: true)
    }

    /// Adds the line of one finished request to the batch. `method` and `target` are `nil` for a request whose
    /// head could not be parsed; `peer` is `nil` when the kernel did not say who connected.
    mutating func record(
        method: HTTPMethod?, target: ArraySlice<UInt8>?, status: Int, bodyBytes: Int64, nanoseconds: UInt64,
        peer: PeerCredentials?
    ) {
        line.removeAll(keepingCapacity: true)
        switch sink.format {
        case .text:
            timestamp.append(into: &line)
            line.append(UInt8(ascii: " "))
            if let method { line.append(contentsOf: method.token.utf8) } else { line.append(UInt8(ascii: "-")) }
            line.append(UInt8(ascii: " "))
            if let target { Self.appendTarget(target, into: &line) } else { line.append(UInt8(ascii: "-")) }
            line.append(UInt8(ascii: " "))
            LogTimestamp.digits(status, into: &line)
            line.append(UInt8(ascii: " "))
            LogTimestamp.digits(Int(bodyBytes), into: &line)
            line.append(UInt8(ascii: " "))
            Self.appendMilliseconds(nanoseconds, into: &line)
            line.append(contentsOf: " uid=".utf8)
            if let peer { LogTimestamp.digits(Int(peer.userID), into: &line) } else { line.append(UInt8(ascii: "-")) }
            line.append(contentsOf: " pid=".utf8)
            if let peer { LogTimestamp.digits(Int(peer.processID), into: &line) } else { line.append(UInt8(ascii: "-")) }
        case .json:
            line.append(contentsOf: #"{"time":""#.utf8)
            timestamp.append(into: &line)
            line.append(contentsOf: #"","level":"info","msg":"request","method":"#.utf8)
            if let method {
                line.append(UInt8(ascii: "\""))
                LogJSON.appendEscaped(method.token.utf8, into: &line)
                line.append(UInt8(ascii: "\""))
            } else {
                line.append(contentsOf: "null".utf8)
            }
            line.append(contentsOf: #","path":"#.utf8)
            if let target {
                line.append(UInt8(ascii: "\""))
                Self.appendTarget(target, into: &line)
                line.append(UInt8(ascii: "\""))
            } else {
                line.append(contentsOf: "null".utf8)
            }
            line.append(contentsOf: #","status":"#.utf8)
            LogTimestamp.digits(status, into: &line)
            line.append(contentsOf: #","bytes":"#.utf8)
            LogTimestamp.digits(Int(bodyBytes), into: &line)
            line.append(contentsOf: #","duration_ms":"#.utf8)
            Self.appendMilliseconds(nanoseconds, into: &line)
            line.append(contentsOf: #","uid":"#.utf8)
            if let peer { LogTimestamp.digits(Int(peer.userID), into: &line) } else { line.append(contentsOf: "null".utf8) }
            line.append(contentsOf: #","pid":"#.utf8)
            if let peer { LogTimestamp.digits(Int(peer.processID), into: &line) } else { line.append(contentsOf: "null".utf8) }
            line.append(UInt8(ascii: "}"))
        }
        line.append(0x0A)
        if pending.count + line.count > AccessLogWriter.batchLimit { flush() }
        pending.append(contentsOf: line)
    }

    /// The request target as received, except that bytes outside printable ASCII are percent-encoded
    /// and (for JSON's sake, in both formats) `"` and `\` are too: a field never contains a space, a
    /// quote or a byte that is not UTF-8.
    private static func appendTarget(_ target: ArraySlice<UInt8>, into out: inout [UInt8]) {
        for byte in target {
            if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(LogJSON.hex(byte >> 4))
                out.append(LogJSON.hex(byte & 0xF))
            }
        }
    }

    /// Appends `nanoseconds` as milliseconds with three decimals (`12.345`).
    private static func appendMilliseconds(_ nanoseconds: UInt64, into out: inout [UInt8]) {
        let micros = Int(clamping: nanoseconds / 1000)
        LogTimestamp.digits(micros / 1000, into: &out)
        out.append(UInt8(ascii: "."))
        LogTimestamp.digits(micros % 1000, width: 3, into: &out)
    }
}
