import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Ignores `SIGPIPE` in the test process, once. A test feeds a child's stdin through a pipe; when the
/// child exits before reading it all (a refused put, a usage error), the write must fail with `EPIPE`
/// rather than kill every test running in this process.
package enum BrokenPipes {
    /// Evaluate before writing to a child's pipe.
    package static let ignored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
}

/// A value shared between threads under a lock (test helper).
package final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    /// A box holding `value`.
    package init(_ value: Value) { self.value = value }
    /// Runs `body` on the value under the lock.
    package func with<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    /// The value now.
    package var current: Value { with { $0 } }
}

/// What one run of a program printed.
package struct ProcessRun {
    /// The exit status.
    package var status: Int32
    /// Standard output.
    package var output: Data
    /// Standard error.
    package var error: Data
    /// Standard output as UTF-8 text.
    package var outputText: String { String(decoding: output, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    package var errorText: String { String(decoding: error, as: UTF8.self) }

    /// Standard output parsed as one JSON object.
    package func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: output)
        guard let dictionary = object as? [String: Any] else { throw ParseFailure(text: outputText) }
        return dictionary
    }

    /// Standard output that is not one JSON object.
    package struct ParseFailure: Error { package var text: String }
}

/// Runs `program` with `arguments` to completion, feeding `input` through a pipe (optionally in two
/// halves with a pause between them), with standard output and error as pipes. The environment is
/// this process's with `environment` added, or `replacingEnvironment` when given.
package func runProgram(
    _ program: String, _ arguments: [String], input: Data = Data(), pauseMidInput: Double = 0, environment extra: [String: String] = [:],
    replacingEnvironment: [String: String]? = nil, directory: URL? = nil
) throws -> ProcessRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    var environment = replacingEnvironment ?? ProcessInfo.processInfo.environment
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    if let directory { process.currentDirectoryURL = directory }
    BrokenPipes.ignored
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let group = DispatchGroup()
    let outBox = Box(Data()), errBox = Box(Data())
    let outReader = stdout.fileHandleForReading, errReader = stderr.fileHandleForReading
    DispatchQueue.global().async(group: group) { let data = outReader.readDataToEndOfFile(); outBox.with { $0 = data } }
    DispatchQueue.global().async(group: group) { let data = errReader.readDataToEndOfFile(); errBox.with { $0 = data } }
    let writer = stdin.fileHandleForWriting
    // A child that exits before reading all its input makes these writes fail (EPIPE), which is fine.
    DispatchQueue.global().async(group: group) {
        if pauseMidInput > 0 {
            let half = input.count / 2
            try? writer.write(contentsOf: input.prefix(half))
            Thread.sleep(forTimeInterval: pauseMidInput)
            try? writer.write(contentsOf: input.dropFirst(half))
        } else {
            try? writer.write(contentsOf: input)
        }
        try? writer.close()
    }
    process.waitUntilExit()
    group.wait()
    return ProcessRun(status: process.terminationStatus, output: outBox.current, error: errBox.current)
}

/// A child process with its standard error captured in a file; always reaped.
package final class Child {
    /// The process.
    package let process = Process()
    /// Where its standard error goes.
    package let errorPath: String

    /// Starts `executable` with `arguments`, standard error appended to `errorPath`.
    package init(_ executable: URL, _ arguments: [String], errorPath: String) throws {
        self.errorPath = errorPath
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The process id.
    package var pid: Int32 { process.processIdentifier }
    /// What it wrote to standard error so far.
    package var errorText: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// SIGKILL, if it still runs.
    package func kill9() { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Waits (killing it after `seconds`) and returns how it ended.
    @discardableResult
    package func wait(seconds: Double = 60) -> (status: Int32, killed: Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }

    deinit {
        kill9()
        process.waitUntilExit()
    }
}

/// Runs `executable` to completion; its exit status and standard error.
package func runTool(_ executable: URL, _ arguments: [String], scratch: String) throws -> (status: Int32, stderr: String) {
    let child = try Child(executable, arguments, errorPath: scratch + "/stderr-\(UUID().uuidString.prefix(8))")
    let (status, killed) = child.wait()
    return (killed ? -status : status, child.errorText)
}

/// Waits until a store's lock can be taken (the engine of a dropped `PersistentDataStore` is gone), up to `seconds`.
package func waitForStoreUnlocked(_ storePath: String, seconds: Double = 10) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
        let fd = open(storePath + "/.lock", O_RDONLY | O_CLOEXEC)
        if fd < 0 { return true }
        let free = flock(fd, LOCK_EX | LOCK_NB) == 0
        close(fd)  // releases our probe lock too
        if free { return true }
        usleep(5_000)
    } while Date() < deadline
    return false
}

/// Starts a program with `posix_spawn` (default signal mask and dispositions; stdout to /dev/null,
/// stderr appended to `errorPath`) and returns its pid; reap it with ``waitForProcess(_:)``.
package func spawnProcess(_ path: String, _ arguments: [String], errorPath: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGCHLD, SIGXFSZ] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
    guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
    return pid
}

/// Reaps a spawned process (killing it after `seconds`); its exit status, or -signal.
package func waitForProcess(_ pid: pid_t, seconds: Double = 60) -> Int32 {
    let deadline = Date().addingTimeInterval(seconds)
    var status: Int32 = 0
    while true {
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { break }
        if result < 0 && errno != EINTR { return -1 }
        if Date() > deadline { kill(pid, SIGKILL) }
        usleep(2_000)
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : -signal
}
