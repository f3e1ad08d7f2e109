import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Shared machinery of the hostile-input suite: a byte-level client that tolerates the daemon
// closing on it, a table-driven case runner, and the checks run after every group (the daemon
// lives, serves a normal client, and wrote nothing outside its root).

/// What one read from the wire produced.
enum WireRead {
    case data
    /// End of stream, or `ECONNRESET` (Linux reports that when the daemon closes with our unread bytes queued).
    case closed
    case timedOut
}

/// Why a response could not be read.
enum WireError: Error, CustomStringConvertible {
    case closedBeforeResponse(pending: Int)
    case timedOut
    case malformed(String)

    var description: String {
        switch self {
        case .closedBeforeResponse(let pending): "connection closed before a complete response (\(pending) bytes pending)"
        case .timedOut: "timed out waiting for the daemon"
        case .malformed(let line): "malformed response: \(line)"
        }
    }
}

/// A blocking client that speaks raw bytes and never throws just because the daemon hung up.
final class WireClient {
    let fd: FileDescriptor
    private var buffer: [UInt8] = []
    private(set) var closedByPeer = false

    init(path: String, timeout: Int = 10) throws {
        fd = try UnixSocket.connect(path: path)
        setReceiveTimeout(seconds: timeout)
    }

    deinit { try? fd.close() }

    func setReceiveTimeout(seconds: Int, microseconds: Int = 0) {
        var value = timeval(tv_sec: seconds, tv_usec: microseconds)
        setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends everything; false if the daemon closed its side first (EPIPE / ECONNRESET).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                do {
                    guard let n = try fd.send(UnsafeRawBufferPointer(rebasing: raw[offset...])) else { continue }
                    offset += n
                } catch {
                    return false
                }
            }
            return true
        }
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Sends `bytes` in pieces of `pieceSize` bytes, pausing between them so the daemon sees them separately.
    @discardableResult
    func sendSlowly(_ bytes: [UInt8], pieceSize: Int = 1, pauseMicroseconds: UInt32 = 300) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            guard send(Array(bytes[offset..<end])) else { return false }
            offset = end
            if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
        }
        return true
    }

    /// Half-closes: the daemon reads end of stream.
    func shutdownWrite() { _ = shutdown(fd.rawValue, Int32(SHUT_WR)) }

    private func fill() -> WireRead {
        if closedByPeer { return .closed }
        var chunk = [UInt8](repeating: 0, count: 65536)
        do {
            let n = try chunk.withUnsafeMutableBytes { try fd.receive(into: $0) }
            guard let n else { return .timedOut }
            if n == 0 {
                closedByPeer = true
                return .closed
            }
            buffer.append(contentsOf: chunk[..<n])
            return .data
        } catch {
            closedByPeer = true
            return .closed
        }
    }

    /// Reads one response (Content-Length framed; none for HEAD, 1xx, 204, 304).
    func readResponse(method: String = "GET") throws(WireError) -> RawResponse {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = findHeadEnd()
            if headEnd != nil { break }
            switch fill() {
            case .data: continue
            case .closed: throw .closedBeforeResponse(pending: buffer.count)
            case .timedOut: throw .timedOut
            }
        }
        let end = headEnd!
        let lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(end + 4)
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else { throw .malformed(lines[0]) }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed(line) }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        if method == "HEAD" || status < 200 || status == 204 || status == 304 { return response }
        guard let lengthText = response.header("Content-Length"), let length = Int(lengthText) else {
            throw .malformed("status \(status) without Content-Length")
        }
        while buffer.count < length {
            switch fill() {
            case .data: continue
            case .closed: throw .closedBeforeResponse(pending: buffer.count)
            case .timedOut: throw .timedOut
            }
        }
        response.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return response
    }

    /// Reads exactly `count` bytes of whatever comes (for partial reads of a big body).
    func readBytes(_ count: Int) -> [UInt8] {
        while buffer.count < count, fill() == .data {}
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(taken.count)
        return taken
    }

    /// Waits until the daemon closes the connection, discarding what arrives; false if it stays
    /// open for `seconds`, or if it sends more than `allowedExtraBytes` first.
    func awaitClose(seconds: Double = 5, allowedExtraBytes: Int = 0) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        setReceiveTimeout(seconds: 0, microseconds: 200_000)
        defer { setReceiveTimeout(seconds: 10) }
        while Date() < deadline {
            switch fill() {
            case .closed: return buffer.count <= allowedExtraBytes
            case .data, .timedOut: continue
            }
        }
        return false
    }

    /// Bytes received and not consumed.
    var pending: [UInt8] { buffer }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }
}

/// One response a case expects, in order.
struct ExpectedResponse: CustomStringConvertible {
    var status: Int
    /// The JSON error code; nil for success responses (then the body is not checked).
    var code: String?
    /// For 405: the exact `Allow` header.
    var allow: String?
    /// The method of the request answered (HEAD responses have no body).
    var method = "GET"

    static func error(_ status: Int, _ code: String, allow: String? = nil, method: String = "GET") -> ExpectedResponse {
        ExpectedResponse(status: status, code: code, allow: allow, method: method)
    }
    static func ok(_ status: Int = 200, method: String = "GET") -> ExpectedResponse {
        ExpectedResponse(status: status, code: nil, allow: nil, method: method)
    }
    static let badRequest = ExpectedResponse.error(400, "bad_request")

    var description: String { "\(status)" + (code.map { " \($0)" } ?? "") + (allow.map { " Allow: \($0)" } ?? "") }
}

/// What the connection does after the expected responses.
enum Afterwards {
    /// The daemon closes it (after malformed input).
    case closed
    /// It stays usable: a `GET /v1/health` on it answers 200.
    case open
    /// Not checked (e.g. `Connection: close` requested by the case itself).
    case unchecked
}

/// One hostile input and its documented outcome.
struct HostileCase: Sendable {
    var name: String
    var bytes: [UInt8]
    var responses: [ExpectedResponse]
    var afterwards: Afterwards
    /// Sent in 1-byte pieces.
    var trickle = false
    /// A known daemon bug (named in the report): the expectation stays as documented but failures are known.
    var knownIssue: String?
    /// Half-close (shut down writing) after sending: the daemon reads end of stream.
    var halfClose = false

    init(_ name: String, _ bytes: [UInt8], _ responses: [ExpectedResponse], _ afterwards: Afterwards, trickle: Bool = false, knownIssue: String? = nil) {
        self.name = name
        self.bytes = bytes
        self.responses = responses
        self.afterwards = afterwards
        self.trickle = trickle
        self.knownIssue = knownIssue
    }

    init(_ name: String, _ text: String, _ responses: [ExpectedResponse], _ afterwards: Afterwards, trickle: Bool = false, knownIssue: String? = nil) {
        self.init(name, Array(text.utf8), responses, afterwards, trickle: trickle, knownIssue: knownIssue)
    }

    /// A single malformed request: one `400 bad_request` (or `status`), then the connection closes.
    static func malformed(_ name: String, _ text: String, status: Int = 400) -> HostileCase {
        HostileCase(name, text, [.error(status, "bad_request")], .closed)
    }

    static func malformed(_ name: String, bytes: [UInt8], status: Int = 400) -> HostileCase {
        HostileCase(name, bytes, [.error(status, "bad_request")], .closed)
    }

    /// Bytes after which the client half-closes: no response, and the daemon closes too.
    static func halfClosed(_ name: String, _ text: String) -> HostileCase {
        var item = HostileCase(name, text, [], .closed)
        item.halfClose = true
        return item
    }
}

extension ExpectedResponse: Sendable {}
extension Afterwards: Sendable {}

enum Hostile {
    /// Builds raw request text: a start line, CRLF-terminated header lines, a blank line, and a body.
    static func request(_ startLine: String, _ headers: [String] = ["Host: blobd"], body: String = "") -> String {
        startLine + "\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n" + body
    }

    static func get(_ target: String, _ extra: [String] = []) -> String {
        request("GET \(target) HTTP/1.1", ["Host: blobd"] + extra)
    }

    static func put(_ target: String, body: String, _ extra: [String] = []) -> String {
        request("PUT \(target) HTTP/1.1", ["Host: blobd", "Content-Length: \(body.utf8.count)"] + extra, body: body)
    }

    /// Starts a daemon for one group, or records why not.
    static func startDaemon() throws -> DaemonProcess {
        try DaemonProcess()
    }

    /// Runs every case on its own connection and checks its outcome; returns how many ran.
    @discardableResult
    static func run(_ cases: [HostileCase], on daemon: DaemonProcess, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        print("hostile cases: \(cases.count) at \(sourceLocation.fileName):\(sourceLocation.line)")
        for item in cases {
            if let issue = item.knownIssue {
                withKnownIssue(Comment(rawValue: issue)) {
                    runOne(item, on: daemon, sourceLocation: sourceLocation)
                }
            } else {
                runOne(item, on: daemon, sourceLocation: sourceLocation)
            }
        }
        return cases.count
    }

    static func runOne(_ item: HostileCase, on daemon: DaemonProcess, sourceLocation: SourceLocation) {
        let client: WireClient
        do { client = try WireClient(path: daemon.socketPath) } catch {
            Issue.record("[\(item.name)] cannot connect: \(error)", sourceLocation: sourceLocation)
            return
        }
        // The daemon may close before taking everything (e.g. after a 431); that is allowed.
        if item.trickle { client.sendSlowly(item.bytes) } else { client.send(item.bytes) }
        if item.halfClose { client.shutdownWrite() }
        for (index, expected) in item.responses.enumerated() {
            do {
                let response = try client.readResponse(method: expected.method)
                #expect(response.status == expected.status, "[\(item.name)] response \(index + 1): expected \(expected), got \(response.status) \(response.text)", sourceLocation: sourceLocation)
                if let code = expected.code, expected.method != "HEAD" {
                    #expect(response.errorCode == code, "[\(item.name)] response \(index + 1): expected code \(code), got \(response.text)", sourceLocation: sourceLocation)
                    #expect(response.header("Content-Type") == "application/json", "[\(item.name)] error without JSON content type", sourceLocation: sourceLocation)
                }
                if let allow = expected.allow {
                    #expect(response.header("Allow") == allow, "[\(item.name)] expected Allow: \(allow), got \(response.header("Allow") ?? "none")", sourceLocation: sourceLocation)
                }
            } catch {
                Issue.record("[\(item.name)] response \(index + 1) (expected \(expected)): \(error)", sourceLocation: sourceLocation)
                return
            }
        }
        switch item.afterwards {
        case .closed:
            #expect(client.awaitClose(), "[\(item.name)] the daemon should close the connection (pending: \(String(decoding: client.pending, as: UTF8.self)))", sourceLocation: sourceLocation)
        case .open:
            client.send(get("/v1/health"))
            do {
                let response = try client.readResponse()
                #expect(response.status == 200, "[\(item.name)] connection should stay usable, got \(response.status)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("[\(item.name)] connection should stay usable: \(error)", sourceLocation: sourceLocation)
            }
        case .unchecked:
            break
        }
    }

    /// One request on a fresh connection (for setup and verification).
    static func fetch(_ daemon: DaemonProcess, _ text: String, method: String = "GET") throws -> RawResponse {
        let client = try WireClient(path: daemon.socketPath)
        client.send(text)
        return try client.readResponse(method: method)
    }

    /// After a group: the daemon runs, a normal client is served promptly, nothing escaped the root,
    /// and no upload left a temp file behind.
    static func checkSurvived(_ daemon: DaemonProcess, group: String, sentinels: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(daemon.process.isRunning, "[\(group)] blobd died: \(daemon.log.suffix(2000))", sourceLocation: sourceLocation)
        guard daemon.process.isRunning else { return }
        let started = Date()
        do {
            let client = try WireClient(path: daemon.socketPath, timeout: 5)
            client.send(get("/v1/health"))
            let response = try client.readResponse()
            #expect(response.status == 200 && response.text == #"{"status":"ok"}"#, "[\(group)] health: \(response.status) \(response.text)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("[\(group)] a normal client is not served: \(error)", sourceLocation: sourceLocation)
        }
        #expect(Date().timeIntervalSince(started) < 5, "[\(group)] health took too long", sourceLocation: sourceLocation)
        for problem in containmentProblems(daemon) {
            Issue.record("[\(group)] \(problem)", sourceLocation: sourceLocation)
        }
        for path in sentinels where FileManager.default.fileExists(atPath: path) {
            Issue.record("[\(group)] a file appeared outside the root: \(path)", sourceLocation: sourceLocation)
        }
        let leftovers = waitForEmptyTempFolders(daemon)
        #expect(leftovers.isEmpty, "[\(group)] temp files left behind: \(leftovers)", sourceLocation: sourceLocation)
    }

    /// Every entry of the temp folder must be the root (or inside it), the socket's folder and
    /// socket, or the log; nothing in the root may be a symbolic link.
    static func containmentProblems(_ daemon: DaemonProcess) -> [String] {
        let base = daemon.folder.path
        let runFolder = (daemon.socketPath as NSString).deletingLastPathComponent
        var problems: [String] = []
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return ["cannot walk \(base)"] }
        while let relative = enumerator.nextObject() as? String {
            let full = base + "/" + relative
            if full == daemon.root || full.hasPrefix(daemon.root + "/") {
                var status = stat()
                if lstat(full, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK {
                    problems.append("symbolic link inside the root: \(full)")
                }
                continue
            }
            if full == runFolder || full == daemon.socketPath || full == daemon.logPath { continue }
            problems.append("written outside the root: \(full)")
        }
        return problems
    }

    /// Files in any `ROOT/STORE/tmp/`, after waiting up to `seconds` for them to go.
    static func waitForEmptyTempFolders(_ daemon: DaemonProcess, seconds: Double = 5) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            var found: [String] = []
            let stores = (try? FileManager.default.contentsOfDirectory(atPath: daemon.root)) ?? []
            for store in stores {
                let tmp = daemon.root + "/" + store + "/tmp"
                for file in (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? [] { found.append(tmp + "/" + file) }
            }
            if found.isEmpty || Date() >= deadline { return found }
            usleep(50_000)
        }
    }

    /// Raises this process's soft open-file limit to at least `needed`; nil on success, else why not.
    static func ensureOpenFileLimit(_ needed: rlim_t) -> String? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return "getrlimit failed" }
        if limit.rlim_cur >= needed { return nil }
        if limit.rlim_max != rlim_t.max && limit.rlim_max < needed {
            return "RLIMIT_NOFILE hard limit \(limit.rlim_max) is below the \(needed) descriptors needed"
        }
        limit.rlim_cur = needed
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return "setrlimit(\(needed)) failed: errno \(errno)" }
        return nil
    }

    /// The value of an unlabelled metric in `/metrics`.
    static func metric(_ daemon: DaemonProcess, _ name: String) -> Double? {
        guard let response = try? fetch(daemon, get("/metrics")), response.status == 200 else { return nil }
        for line in response.text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Waits until the daemon's open-connection gauge falls to `atMost` (the metrics request's own connection counts).
    static func waitForOpenConnections(_ daemon: DaemonProcess, atMost: Double, seconds: Double = 15) -> Double? {
        let deadline = Date().addingTimeInterval(seconds)
        var last: Double?
        while Date() < deadline {
            last = metric(daemon, "blobd_open_connections")
            if let last, last <= atMost { return last }
            usleep(100_000)
        }
        return last
    }

    static let suiteEnabled = BlobdBinary.url != nil
}
