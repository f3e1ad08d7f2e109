/// `blob completion bash|zsh|fish`: prints a shell completion script.
struct CompletionCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "completion",
        abstract: "Print a completion script for bash, zsh or fish.",
        discussion: """
            The script completes commands, options, and file and folder names where those are expected. \
            Load it from the shell's startup file, or install it where the shell looks for completions.
            """,
        arguments: [ArgumentSpec("SHELL", help: "bash, zsh or fish.")],
        examples: [
            "source <(blob completion bash)                 # in ~/.bashrc",
            "blob completion zsh > \"${fpath[1]}/_blob\"",
            "blob completion fish > ~/.config/fish/completions/blob.fish",
        ])

    let shell: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        shell = arguments.positionals[0]
        guard Completions.shells.contains(shell) else {
            throw UsageError(
                "no completion for shell '\(shell)' (bash, zsh or fish)\(Suggestions.hint(for: shell, among: Completions.shells))",
                command: Self.spec.name)
        }
    }

    /// Needs no store: runs before any backend is chosen.
    func run(_ context: CommandContext) async throws {}

    /// The script, printed by ``BlobCLI`` without a backend.
    var script: String { Completions.script(for: shell) ?? "" }
}
