import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One `blobd` process on a temp root and socket.
package final class DaemonProcess {
    /// The folder holding the root, the socket and the log (by default).
    package let folder: TempFolder
    /// The store root.
    package let root: String
    /// The socket it listens on.
    package let socketPath: String
    /// The daemon process.
    package let process = Process()
    /// Where its standard error goes.
    package let logPath: String

    /// Starts blobd, with `environment` over this process's variables; `waitForSocket` waits until it accepts connections.
    package init(
        folder: TempFolder = TempFolder(), root: String? = nil, socket: String? = nil, extraArguments: [String] = [], logLevel: String = "debug",
        environment: [String: String] = [:], waitForSocket: Bool = true
    ) throws {
        self.folder = folder
        self.root = root ?? folder.path + "/root"
        self.socketPath = socket ?? folder.path + "/run/blobd.sock"
        logPath = folder.path + "/blobd-\(UUID().uuidString.prefix(8)).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = BlobdBinary.url!
        process.arguments = ["--root", self.root, "--socket", socketPath, "--durability", "relaxed", "--log-level", logLevel] + extraArguments
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = FileHandle.nullDevice
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        try process.run()
        if waitForSocket { try waitUntilServing() }
    }

    /// Waits until the daemon accepts connections (up to 15 s); throws with its log if it exits first.
    package func waitUntilServing() throws {
        try Self.waitUntilServing(process, socketPath: socketPath, seconds: 15) { log }
    }

    /// Waits until `process`, a `blobd`, accepts connections on `socketPath` (up to `seconds`); throws
    /// with `log()` if it exits first or does not start listening in time.
    package static func waitUntilServing(_ process: Process, socketPath: String, seconds: Double, log: () -> String) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !process.isRunning { throw HarnessError("blobd exited early (\(process.terminationStatus)): \(log())") }
            if let fd = try? UnixSocket.connect(path: socketPath) {
                try? fd.close()
                return
            }
            usleep(10_000)
        }
        throw HarnessError("blobd did not start listening within \(Int(seconds)) s: \(log())")
    }

    /// Everything the daemon logged so far.
    package var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit (up to `seconds`) and returns its status, or nil if it is still running.
    package func waitForExit(seconds: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// SIGTERM, then SIGKILL if it has not exited within 10 s.
    package func terminate() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            _ = waitForExit()
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// A new raw connection to the daemon.
    package func connect() throws -> RawClient { try RawClient(path: socketPath) }

    deinit { terminate() }
}

/// A test harness failure, with what went wrong.
package struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong.
    package let description: String
    /// A failure saying `description`.
    package init(_ description: String) { self.description = description }
}

/// A response as read off the wire by ``RawClient`` (an independent, minimal HTTP reader).
package struct RawResponse {
    /// The status code.
    package var status: Int
    /// The header fields, in order.
    package var headers: [(name: String, value: String)]
    /// The body bytes.
    package var body: [UInt8]

    /// A response with these parts.
    package init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive).
    package func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    /// The body as UTF-8 text.
    package var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object.
    package var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
    /// The `error.code` of a JSON error body.
    package var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
}

/// A blocking client speaking raw HTTP/1.1 bytes over the daemon's socket.
package final class RawClient {
    /// The connected socket.
    package let fd: FileDescriptor
    private var buffer: [UInt8] = []

    /// Connects to the socket at `path` (reads time out after 20 s).
    package init(path: String) throws {
        fd = try UnixSocket.connect(path: path)
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { try? fd.close() }

    /// Sends `text` as UTF-8.
    package func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends all of `bytes`.
    package func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                guard let n = try fd.send(UnsafeRawBufferPointer(rebasing: raw[offset...])) else { continue }
                offset += n
            }
        }
    }

    /// Sends one request with an optional body and reads the response.
    package func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws -> RawResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: blobd\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + (body ?? []))
        return try readResponse(method: method)
    }

    /// Reads more bytes; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = try chunk.withUnsafeMutableBytes { try fd.receive(into: $0) }
        guard let n, n > 0 else {
            if n == nil { throw HarnessError("timed out waiting for the daemon") }
            return false
        }
        buffer.append(contentsOf: chunk[..<n])
        return true
    }

    /// Reads one response; bodies are framed by Content-Length (none for HEAD, 1xx, 204, 304).
    package func readResponse(method: String = "GET") throws -> RawResponse {
        var headEnd: Int?
        while true {
            if let range = findHeadEnd() { headEnd = range; break }
            guard try fill() else { throw HarnessError("connection closed before a response head") }
        }
        let headBytes = buffer[..<headEnd!]
        buffer.removeFirst(headEnd! + 4)
        let lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw HarnessError("bad status line \(lines[0])") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        if method == "HEAD" || status < 200 || status == 204 || status == 304 { return response }
        let length = Int(response.header("Content-Length") ?? "0") ?? 0
        while buffer.count < length {
            guard try fill() else { throw HarnessError("connection closed in a body") }
        }
        response.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return response
    }

    /// Whether the daemon closed the connection (reads to end of stream, ignoring what is left).
    package func isClosedByPeer() -> Bool {
        do { while try fill() {} } catch { return false }
        return true
    }

    /// Reads until the unconsumed bytes contain `marker`; returns and consumes everything up to and including it.
    package func readUntil(_ marker: String) throws -> String {
        let needle = Array(marker.utf8)
        while true {
            if buffer.count >= needle.count {
                for i in 0...(buffer.count - needle.count) where Array(buffer[i..<(i + needle.count)]) == needle {
                    let text = String(decoding: buffer[..<(i + needle.count)], as: UTF8.self)
                    buffer.removeFirst(i + needle.count)
                    return text
                }
            }
            guard try fill() else { throw HarnessError("connection closed before '\(marker)'") }
        }
    }

    /// Bytes received and not yet consumed.
    package var pending: [UInt8] { buffer }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }
}

/// The kernel's view of the daemon's side of a connection, read with `ss` (iproute2): the socket
/// options of another process's socket cannot be read from here.
package enum SocketMemory {
    /// Where `ss` is installed, if it is.
    package static let ssPath = ["/usr/bin/ss", "/bin/ss", "/usr/sbin/ss", "/sbin/ss"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// Why a test that needs `ss` cannot run.
    package static var skipReason: String? { ssPath == nil ? "`ss` (iproute2) not installed: cannot read the daemon's socket buffers" : nil }
    /// `net.core.wmem_max`: the largest send buffer an unprivileged process may ask for.
    package static var wmemMax: Int? {
        (try? String(contentsOfFile: "/proc/sys/net/core/wmem_max", encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The send buffer (`tb` in `ss -m`) of the socket whose peer is `clientSocket`: the daemon's end.
    package static func daemonSendBuffer(peerOf clientSocket: FileDescriptor) throws -> Int {
        var status = stat()
        guard fstat(clientSocket.rawValue, &status) == 0 else { throw HarnessError("fstat of the client socket failed") }
        let inode = String(status.st_ino)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ssPath!)
        process.arguments = ["-x", "-m", "-n"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // "u_str ESTAB 0 0 /path/blobd.sock 1234 * 1235 skmem:(r0,rb212992,t0,tb212992,...)": the
        // daemon's end has the client's inode as its peer (the field after "*").
        // ss puts skmem on a continuation line (indented) in some versions: join those first.
        var lines: [String] = []
        for line in output.split(separator: "\n") {
            if line.first?.isWhitespace == true, !lines.isEmpty { lines[lines.count - 1] += " " + line } else { lines.append(String(line)) }
        }
        for line in lines {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let star = fields.lastIndex(of: "*"), star + 1 < fields.count, fields[star + 1] == inode,
                let memory = fields.first(where: { $0.hasPrefix("skmem:(") })
            else { continue }
            for item in memory.dropFirst("skmem:(".count).dropLast().split(separator: ",") where item.hasPrefix("tb") {
                if let value = Int(item.dropFirst(2)) { return value }
            }
        }
        throw HarnessError("no socket with peer inode \(inode) in `ss -xmn` output:\n\(output)")
    }
}
