import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal for tests of terminal-dependent behaviour: the child gets the terminal side as
/// any of its standard streams (so `isatty` is true there); the test reads what the child wrote to it
/// and types into it.
final class PseudoTerminal: @unchecked Sendable {
    /// The test's side.
    let controller: Int32
    /// The child's side (closed in this process once the child has it).
    let terminal: Int32
    private let transcriptBox = Box(Data())
    private let done = DispatchSemaphore(value: 0)
    private let reading = DispatchSemaphore(value: 0)

    struct Failure: Error { var step: String; var errno: Int32 }

    /// With `reading: false` nothing is read from the terminal until ``startReading()``: a child
    /// writing to it blocks once the terminal's buffer is full (a stalled transfer).
    init(reading: Bool = true) throws {
        controller = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard controller >= 0 else { throw Failure(step: "open /dev/ptmx", errno: errno) }
        // TIOCSPTLCK (unlock) and TIOCGPTN (number): Glibc's Swift module lacks unlockpt/ptsname.
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(controller, 0x4004_5431, &unlock) == 0, ioctl(controller, 0x8004_5430, &number) == 0 else {
            throw Failure(step: "unlock the pseudo-terminal", errno: errno)
        }
        terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { throw Failure(step: "open /dev/pts/\(number)", errno: errno) }
        let (controller, box, done, start) = (controller, transcriptBox, done, self.reading)
        if reading { start.signal() }
        Thread.detachNewThread {
            start.wait()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(controller, &buffer, buffer.count)
                if count <= 0 { break }  // EIO once no process has the terminal side open.
                box.with { $0.append(contentsOf: buffer[0..<count]) }
            }
            done.signal()
        }
    }

    /// Starts reading (for a terminal made with `reading: false`).
    func startReading() { reading.signal() }

    /// A handle on the terminal side for `Process.standardInput/Output/Error`.
    var handle: FileHandle { FileHandle(fileDescriptor: terminal, closeOnDealloc: false) }

    /// Everything written to the terminal so far (the terminal turns "\n" into "\r\n").
    var transcript: String { String(decoding: transcriptBox.current, as: UTF8.self) }

    /// Types `text` as if at the keyboard (the terminal echoes it into the transcript).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(controller, $0.baseAddress, $0.count) }
    }

    /// Waits up to 15 s for `needle` to appear in the transcript.
    func waitFor(_ needle: String) -> Bool {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if transcript.contains(needle) { return true }
            usleep(20_000)
        }
        return false
    }

    /// Closes the terminal side here (the child keeps its own); after the child exits, waits for the
    /// reader to see the end, then closes the controller.
    func closeTerminalSide() { close(terminal) }

    func finish() {
        _ = done.wait(timeout: .now() + 5)
        close(controller)
    }
}

/// Starts the `blob` binary with each standard stream a pipe or the terminal `terminal`.
func startBlob(
    _ arguments: [String], terminal: PseudoTerminal, stdinOnTerminal: Bool, stdoutOnTerminal: Bool, stderrOnTerminal: Bool,
    stderrTerminal: PseudoTerminal? = nil
) throws -> (process: Process, stdin: Pipe, stdout: Pipe, stderr: Pipe) {
    guard let binary = BlobBinary.url else { throw BinaryMissing() }
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["BLOB_SOCKET"] = nil
    environment["XDG_RUNTIME_DIR"] = "/nonexistent-runtime"
    environment["COLUMNS"] = "120"
    process.environment = environment
    BrokenPipes.ignored
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdinOnTerminal ? terminal.handle : stdin
    process.standardOutput = stdoutOnTerminal ? terminal.handle : stdout
    process.standardError = stderrTerminal?.handle ?? (stderrOnTerminal ? terminal.handle : stderr)
    try process.run()
    terminal.closeTerminalSide()
    stderrTerminal?.closeTerminalSide()
    return (process, stdin, stdout, stderr)
}
