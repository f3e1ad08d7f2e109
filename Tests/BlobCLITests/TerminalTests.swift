import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Behaviour that depends on what the standard streams are connected to, checked with the built
/// `blob` binary on a pseudo-terminal (`--root` on a temporary folder).
@Suite("blob on a terminal", .serialized, .enabled(if: BlobBinary.url != nil, BlobBinary.missingReason))
struct TerminalTests {
    let folder: TempFolder
    var root: String { folder.url.appendingPathComponent("root").path }

    init() throws { folder = TempFolder() }

    func blob(_ arguments: [String], input: Data? = nil) throws -> ProcessRun {
        try runBlob(["--root", root] + arguments, input: input)
    }

    @Test("progress on a terminal standard error shows percent, rate and ETA when the size is known, then is erased")
    func progressWithETA() throws {
        defer { folder.cleanUp() }
        let content = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(try blob(["put", "s/big"], input: content).status == 0)
        let terminal = try PseudoTerminal()
        let run = try startBlob(["--root", root, "get", "s/big"], terminal: terminal, stdinOnTerminal: false, stdoutOnTerminal: false, stderrOnTerminal: true)
        // Standard output is a pipe nobody reads for a while: the transfer stalls past the progress delay.
        #expect(terminal.waitFor("ETA "), "no progress line: \(terminal.transcript.debugDescription)")
        let output = run.stdout.fileHandleForReading.readDataToEndOfFile()
        run.process.waitUntilExit()
        terminal.finish()
        #expect(run.process.terminationStatus == 0)
        #expect(output == content)
        let transcript = terminal.transcript
        #expect(transcript.contains("get s/big  ") && transcript.contains("%  ") && transcript.contains("/s  ETA "), "\(transcript.debugDescription)")
        #expect(transcript.contains(" / 4.0 MiB"))
        #expect(transcript.hasSuffix("\r\u{1B}[K"), "the line is erased at the end")
    }

    @Test("no progress while get writes the content to a terminal, even when the transfer stalls")
    func noProgressWhenContentGoesToTheTerminal() throws {
        defer { folder.cleanUp() }
        let content = Data(repeating: UInt8(ascii: "a"), count: 1 << 20)
        #expect(try blob(["put", "s/text"], input: content).status == 0)
        let screen = try PseudoTerminal(reading: false)
        let errors = try PseudoTerminal()
        let run = try startBlob(
            ["--root", root, "get", "s/text"], terminal: screen, stdinOnTerminal: false, stdoutOnTerminal: true, stderrOnTerminal: true,
            stderrTerminal: errors)
        usleep(1_500_000)  // Nobody reads the screen: the write blocks past the progress delay.
        screen.startReading()
        run.process.waitUntilExit()
        screen.finish()
        errors.finish()
        #expect(run.process.terminationStatus == 0)
        #expect(screen.transcript.utf8.count >= content.count)
        #expect(errors.transcript.isEmpty, "\(errors.transcript.debugDescription)")
    }

    @Test("no progress while the content is typed on a terminal standard input")
    func noProgressWhileTyping() throws {
        defer { folder.cleanUp() }
        let terminal = try PseudoTerminal()
        let run = try startBlob(["--root", root, "put", "s/typed"], terminal: terminal, stdinOnTerminal: true, stdoutOnTerminal: false, stderrOnTerminal: true)
        #expect(terminal.waitFor("end with Ctrl-D"))
        terminal.type("hello\n")
        #expect(terminal.waitFor("hello"))
        usleep(1_500_000)  // Longer than the progress delay: a progress line would have appeared by now.
        terminal.type("\u{04}")
        run.process.waitUntilExit()
        terminal.finish()
        #expect(run.process.terminationStatus == 0)
        let transcript = terminal.transcript
        #expect(!transcript.contains("B/s") && !transcript.contains("\u{1B}[K"), "\(transcript.debugDescription)")
        #expect(try blob(["get", "s/typed"]).output == Data("hello\n".utf8))
    }

    @Test("binary content is not written to a terminal unless '-o -' asks for it; text is")
    func binaryToTerminal() throws {
        defer { folder.cleanUp() }
        #expect(try blob(["put", "s/bin"], input: Data([0x89, 0x50, 0x00, 0x01, 0xFF])).status == 0)
        #expect(try blob(["put", "s/text"], input: Data("héllo text\n".utf8)).status == 0)

        func getOnTerminal(_ arguments: [String]) throws -> (status: Int32, transcript: String, error: String) {
            let terminal = try PseudoTerminal()
            let run = try startBlob(["--root", root, "get"] + arguments, terminal: terminal, stdinOnTerminal: false, stdoutOnTerminal: true, stderrOnTerminal: false)
            let error = run.stderr.fileHandleForReading.readDataToEndOfFile()
            run.process.waitUntilExit()
            terminal.finish()
            return (run.process.terminationStatus, terminal.transcript, String(decoding: error, as: UTF8.self))
        }
        let refused = try getOnTerminal(["s/bin"])
        #expect(refused.status == 1)
        #expect(refused.error == "blob: binary output can mess up your terminal; use '-o FILE' to write a file, or '-o -' to write it here anyway\n")
        #expect(refused.transcript.isEmpty)
        let forced = try getOnTerminal(["s/bin", "-o", "-"])
        #expect(forced.status == 0 && !forced.transcript.isEmpty)
        let text = try getOnTerminal(["s/text"])
        #expect(text.status == 0 && text.transcript == "héllo text\r\n")
        // Not a terminal: written as is.
        #expect(try blob(["get", "s/bin"]).output == Data([0x89, 0x50, 0x00, 0x01, 0xFF]))
    }

    @Test("rm -r asks on a terminal: 'n' removes nothing (exit 1), 'y' removes every blob under the prefix")
    func removeByPrefixAsks() throws {
        defer { folder.cleanUp() }
        for name in ["a/1", "a/2", "b/1"] { #expect(try blob(["put", "s/\(name)"], input: Data(name.utf8)).status == 0) }

        func rmOnTerminal(answer: String) throws -> (status: Int32, output: String, transcript: String) {
            let terminal = try PseudoTerminal()
            let run = try startBlob(["--root", root, "rm", "-r", "s/a/"], terminal: terminal, stdinOnTerminal: true, stdoutOnTerminal: false, stderrOnTerminal: true)
            #expect(terminal.waitFor("[y/N] "))
            terminal.type(answer + "\n")
            let output = run.stdout.fileHandleForReading.readDataToEndOfFile()
            run.process.waitUntilExit()
            terminal.finish()
            return (run.process.terminationStatus, String(decoding: output, as: UTF8.self), terminal.transcript)
        }
        let declined = try rmOnTerminal(answer: "n")
        #expect(declined.status == 1 && declined.output.isEmpty)
        #expect(declined.transcript.contains("Remove 2 blobs of store 's' under prefix 'a/'? [y/N] "))
        #expect(declined.transcript.contains("blob: not confirmed; nothing removed"))
        #expect(try blob(["stat", "s/a/1"]).status == 0)

        let accepted = try rmOnTerminal(answer: "y")
        #expect(accepted.status == 0)
        #expect(accepted.output == "removed s/a/1\nremoved s/a/2\n")
        #expect(try blob(["stat", "s/a/1"]).status == 2 && blob(["stat", "s/b/1"]).status == 0)
    }
}
