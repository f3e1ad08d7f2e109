import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A program on the PATH (the shells and `man` are test tools: `.ci/cli-shells` installs them).
func findProgram(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

@Suite("completion scripts and man pages", .serialized, .enabled(if: BlobBinary.url != nil, BlobBinary.missingReason))
struct CompletionAndManTests {
    func script(_ shell: String) throws -> URL {
        let run = try runBlob(["completion", shell])
        #expect(run.status == 0 && run.error.isEmpty)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("blob-completion-\(UUID().uuidString).\(shell)")
        try run.output.write(to: url)
        return url
    }

    @Test("blob completion bash passes bash -n and completes commands and options")
    func bash() throws {
        let file = try script("bash")
        defer { try? FileManager.default.removeItem(at: file) }
        let bash = try #require(findProgram("bash"))
        let check = try runProgram(bash, ["-n", file.path])
        #expect(check.status == 0, "\(check.errorText)")
        // Load it and ask for completions the way bash's completion machinery does.
        let probe = """
            source \(file.path)
            COMP_WORDS=(blob l); COMP_CWORD=1; _blob; echo "${COMPREPLY[*]}"
            COMP_WORDS=(blob put s/x --ty); COMP_CWORD=3; _blob; echo "${COMPREPLY[*]}"
            COMP_WORDS=(blob completion ''); COMP_CWORD=2; _blob; echo "${COMPREPLY[*]}"
            """
        let run = try runProgram(bash, ["-c", probe])
        #expect(run.status == 0, "\(run.errorText)")
        #expect(run.outputText == "ls\n--type\nbash zsh fish\n")
    }

    @Test("blob completion zsh passes zsh -n", .enabled(if: findProgram("zsh") != nil, "zsh is not installed (.ci/cli-shells installs it)"))
    func zsh() throws {
        let file = try script("zsh")
        defer { try? FileManager.default.removeItem(at: file) }
        let check = try runProgram(findProgram("zsh")!, ["-n", file.path])
        #expect(check.status == 0, "\(check.errorText)")
        #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix("#compdef blob\n"))
    }

    @Test("blob completion fish passes fish --no-execute", .enabled(if: findProgram("fish") != nil, "fish is not installed (.ci/cli-shells installs it)"))
    func fish() throws {
        let file = try script("fish")
        defer { try? FileManager.default.removeItem(at: file) }
        let check = try runProgram(findProgram("fish")!, ["--no-execute", file.path])
        #expect(check.status == 0, "\(check.errorText)")
    }

    @Test("an unknown shell is a usage error")
    func unknownShell() throws {
        let run = try runBlob(["completion", "tcsh"])
        #expect(run.status == 64 && run.errorText.hasPrefix("Error: no completion for shell 'tcsh'"))
    }

    /// The page rendered as text by `man -l` when man is installed, else the page's roff source.
    func render(_ page: Data) throws -> String {
        guard let man = findProgram("man") else { return String(decoding: page, as: UTF8.self) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("blob-man-\(UUID().uuidString).1")
        try page.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try runProgram(man, ["-l", file.path], environment: ["MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat", "MAN_KEEP_FORMATTING": ""])
        #expect(run.status == 0, "\(run.errorText)")
        #expect(!run.errorText.contains("warning"), "\(run.errorText)")
        return run.outputText.replacingOccurrences(of: "\u{2010}", with: "-").replacingOccurrences(of: "\u{2212}", with: "-")
    }

    @Test("blob help --man is a man page with every command, option and exit code, and renders")
    func blobPage() throws {
        let run = try runBlob(["help", "--man"])
        #expect(run.status == 0)
        #expect(run.outputText.contains(".TH BLOB 1 ") && run.outputText.contains("\n.SH SYNOPSIS\n"))
        let text = try render(run.output)
        for needle in ["NAME", "SYNOPSIS", "COMMANDS", "EXIT STATUS", "--if-none-match", "--recursive", "completion", "BLOB_SOCKET"] {
            #expect(text.contains(needle), "\(needle)")
        }
        for command in ["put", "get", "rm", "ls", "stat", "stores", "watch", "verify"] {
            #expect(run.outputText.contains(".SS \(command)\n"), "\(command)")
        }
    }

    @Test("blobd's help text becomes blobd(8) with every option")
    func blobdPage() throws {
        let blobd = try #require(BlobdBinary.url)
        let help = try runProgram(blobd.path, ["--help"])
        #expect(help.status == 0)
        let run = try runBlob(["help", "--man", "blobd"], input: help.output)
        #expect(run.status == 0, "\(run.errorText)")
        #expect(run.outputText.contains(".TH BLOBD 8 "))
        let text = try render(run.output)
        for option in ["--root DIR", "--socket PATH", "--durability MODE", "--event-loops N", "--heartbeat SECONDS", "--version"] {
            #expect(text.contains(option), "\(option)")
        }
        let notHelp = try runBlob(["help", "--man", "blobd"], input: Data("hello".utf8))
        #expect(notHelp.status == 64)
    }
}
