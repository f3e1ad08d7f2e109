import BlobStore
import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The `blob` command line: `exit(await BlobCLI.run(CommandLine.arguments))`.
package enum BlobCLI {
    /// Runs one command line (`arguments[0]` is the program name) and returns the exit status.
    ///
    /// - Parameters:
    ///   - environment: read for `BLOB_SOCKET` and `XDG_RUNTIME_DIR`.
    ///   - console: standard input, output and error (tests pass buffers).
    ///   - daemon: makes the daemon backend for a socket path. Without one, every command that would need
    ///     the daemon (no `--root`) fails with exit status 69, naming the socket path it would have used.
    package static func run(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        console: Console = .standard(), daemon: DaemonConnector? = DaemonBackend.connector
    ) async -> Int32 {
        // A reader of standard output that goes away (`blob get … | head`) must end the write with EPIPE,
        // not kill the process before it can clean up.
        signal(SIGPIPE, SIG_IGN)
        do {
            try await dispatch(Array(arguments.dropFirst()), environment: environment, console: console, daemon: daemon)
            return ExitCode.success.rawValue
        } catch {
            await report(error, console: console)
            return ExitCode.for(error).rawValue
        }
    }

    private static func dispatch(
        _ arguments: [String], environment: [String: String], console: Console, daemon: DaemonConnector?
    ) async throws {
        let invocation = try ArgumentParser.split(arguments)
        if invocation.globals.version && invocation.command == nil {
            try await console.print(HelpText.version)
            return
        }
        guard let name = invocation.command else {
            try await console.print(HelpText.root())
            return
        }
        if name == "help" {
            var topics = invocation.rest.filter { $0 != "--" }
            let man = topics.contains("--man")
            topics.removeAll { $0 == "--man" }
            if let option = topics.first(where: { $0.hasPrefix("-") }) {
                throw UsageError("unknown option '\(option)' for 'help'\(Suggestions.hint(for: String(option.drop { $0 == "-" }), among: ["man"], prefix: "--"))", command: nil)
            }
            if topics.count > 1 { throw UsageError("'help' takes one command name (got \(topics.count))", command: nil) }
            if man {
                try await console.print(try await manPage(topics.first, console: console))
                return
            }
            guard let topic = topics.first else {
                try await console.print(HelpText.root())
                return
            }
            guard let command = Commands.named(topic) else {
                if topic == "help" {
                    try await console.print(HelpText.root())
                    return
                }
                throw UsageError("unknown command '\(topic)'\(Suggestions.hint(for: topic, among: Commands.names))", command: nil)
            }
            try await console.print(HelpText.command(command.spec))
            return
        }
        guard let command = Commands.named(name) else {
            throw UsageError("unknown command '\(name)'\(Suggestions.hint(for: name, among: Commands.names))", command: nil)
        }
        if invocation.globals.help {
            try await console.print(HelpText.command(command.spec))
            return
        }
        let parsed = try ArgumentParser.parse(invocation.rest, spec: command.spec)
        let instance = try command.init(parsed)
        if let completion = instance as? CompletionCommand {
            try await console.output.write(Data(completion.script.utf8))
            return
        }
        let backend = try await makeBackend(invocation.globals, environment: environment, daemon: daemon)
        try await instance.run(CommandContext(backend: backend, console: console, json: invocation.globals.json))
    }

    /// `blob help --man`: blob(1); `blob help --man blobd`: blobd(8) from blobd's `--help` text on
    /// standard input (`blobd --help | blob help --man blobd`).
    private static func manPage(_ topic: String?, console: Console) async throws -> String {
        switch topic {
        case nil, "blob"?:
            return ManPage.blob()
        case "blobd"?:
            guard !console.inputIsTerminal else {
                throw UsageError("'help --man blobd' reads blobd's help text from standard input: blobd --help | blob help --man blobd", command: nil)
            }
            var lines: [String] = []
            while let line = try await console.readLine() { lines.append(line) }
            guard lines.contains(where: { $0.hasPrefix("usage: blobd") }) else {
                throw UsageError("standard input is not blobd's help text (no 'usage: blobd' line)", command: nil)
            }
            return ManPage.fromDaemonHelp(lines.joined(separator: "\n"), name: "blobd")
        case let other?:
            throw UsageError("'help --man' writes the page of blob or blobd (got '\(other)')", command: nil)
        }
    }

    /// The embedded store for `--root`, the bucket for `--backend s3://…`, else the daemon's client (or exit 69 when there is none).
    static func makeBackend(_ globals: GlobalOptions, environment: [String: String], daemon: DaemonConnector?) async throws -> any BlobBackend {
        switch BackendChoice.resolve(globals, environment: environment) {
        case .embedded(let root):
            let wait = try EmbeddedBackend.lockWait(option: globals.wait, environment: environment)
            return EmbeddedBackend(root: URL(fileURLWithPath: root), configuration: StoreConfiguration(lockWait: wait))
        case .s3(let location):
            return try S3Backend(location: location, environment: environment)
        case .daemon(let socket):
            if let daemon { return try await daemon(socket) }
            let reason: String
            if let status = try? FileSystem.statusIfExists(socket) {
                reason = status.kind == .socket
                    ? "no daemon client was given"
                    : "\(socket) is not a socket"
            } else {
                reason = "no socket there"
            }
            throw CLIError.daemonUnreachable(socket: socket, reason: reason)
        }
    }

    /// The text after `blob: ` for an error.
    static func message(for error: any Error) -> String {
        switch error {
        case let error as BlobStoreError: return error.description
        case let error as CLIError: return error.description
        case let error as Errno: return error.description
        default: return String(describing: error)
        }
    }

    private static func report(_ error: any Error, console: Console) async {
        switch error {
        case let usage as UsageError:
            await console.printError(usage.description)
        case is ReportedError:
            break
        case let error as CLIError where error.isBrokenPipe:
            break
        default:
            await console.printError("blob: " + message(for: error))
        }
    }
}
