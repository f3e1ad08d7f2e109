import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A `blobd --durability durable` process that can be SIGKILLed and restarted on the same root and socket.
package final class CrashDaemon {
    /// The store root.
    package let root: String
    /// The socket it listens on.
    package let socketPath: String
    /// Where its standard error is appended, across restarts.
    package let logPath: String
    /// The running process, if any.
    package private(set) var process: Process?
    /// A program and arguments to run blobd through (blobd's path and arguments follow), e.g. a shell that sets limits.
    package var wrapper: [String] = []
    /// `--durability` (durable unless a test needs relaxed puts).
    package var durability = "durable"

    /// Prepares a daemon (not started) on `root` and `socketPath`.
    package init(root: String, socketPath: String, logPath: String) {
        self.root = root
        self.socketPath = socketPath
        self.logPath = logPath
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    }

    /// Starts blobd and waits (up to 30 s) until it accepts connections.
    package func start() throws {
        let process = Process()
        let arguments = ["--root", root, "--socket", socketPath, "--durability", durability, "--log-level", "error"]
        if let program = wrapper.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(wrapper.dropFirst()) + [BlobdBinary.url!.path] + arguments
        } else {
            process.executableURL = BlobdBinary.url!
            process.arguments = arguments
        }
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        try DaemonProcess.waitUntilServing(process, socketPath: socketPath, seconds: 30) { logText }
    }

    /// Everything logged so far, by every start.
    package var logText: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL and reap.
    package func kill9() {
        guard let process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGTERM (SIGKILL after 10 s) and reap; returns the exit status.
    @discardableResult
    package func stop() -> Int32? {
        guard let process else { return nil }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
        return process.terminationStatus
    }

    deinit { kill9() }
}
