import BlobStore
import Foundation

/// One `blob` subcommand: its spec (for parsing and help), how it reads its parsed arguments, and
/// what it does against a ``BlobBackend``.
protocol BlobCommand: Sendable {
    static var spec: CommandSpec { get }
    /// Checks and converts the parsed arguments; every problem is a ``UsageError``.
    init(_ arguments: ParsedArguments) throws(UsageError)
    /// Does the work; throws the store's or the tool's errors (mapped to exit codes by ``ExitCode/for(_:)``).
    func run(_ context: CommandContext) async throws
}

/// Everything a running command uses: the backend, the console, and the output mode.
struct CommandContext: Sendable {
    var backend: any BlobBackend
    var console: Console
    /// `--json` was given.
    var json: Bool

    /// Prints `json` (pretty) in JSON mode, else `text` (nothing when empty).
    func emit(json value: @autoclosure () -> JSONValue, text: @autoclosure () -> String) async throws {
        if json {
            try await console.print(value().serialized(pretty: true))
        } else {
            let text = text()
            if !text.isEmpty { try await console.print(text) }
        }
    }

    /// A progress bar for a transfer, drawn only when standard error is a terminal (and `enabled`).
    func progress(_ label: String, total: Int64?, enabled: Bool = true) -> ProgressBar {
        ProgressBar(label: label, total: total, enabled: enabled && console.errorIsTerminal)
    }
}

/// Every command, in the order `blob help` lists them.
enum Commands {
    static let all: [any BlobCommand.Type] = [
        PutCommand.self, GetCommand.self, RmCommand.self, LsCommand.self, StatCommand.self,
        StoresCommand.self, StoreCommand.self, WatchCommand.self, VerifyCommand.self, CompletionCommand.self,
    ]

    /// Every command name `blob` accepts, `help` included (for suggestions and completions).
    static var names: [String] { all.map { $0.spec.name } + ["help"] }

    static func named(_ name: String) -> (any BlobCommand.Type)? {
        all.first { $0.spec.name == name }
    }
}
