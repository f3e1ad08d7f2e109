import BlobStore

/// `blob watch [STORE]`: prints change events until interrupted.
struct WatchCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "watch",
        abstract: "Print one line per change to a store (or to all stores) until interrupted.",
        discussion: """
            Needs the daemon: change events are seen only by the process that makes the changes, so with \
            --root (the embedded store) watch exits with status 64. With --json, each event is one JSON object \
            on its own line.
            """,
        arguments: [ArgumentSpec("STORE", help: "The store to watch; all stores when absent.", optional: true)],
        examples: ["blob watch photos", "blob --json watch | jq -c 'select(.kind == \"put\")'"])

    let store: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        store = arguments.positionals.first
        if let store { try BlobAddress.checkStore(store, command: Self.spec.name) }
    }

    func run(_ context: CommandContext) async throws {
        if let store { _ = try await context.backend.store(store, create: false) }
        let changes = try await context.backend.changes(store)
        for await change in changes {
            let line = context.json ? JSONOutput.change(change).serialized() : Self.line(change)
            try await context.console.print(line)
        }
    }

    /// `2025-01-31 14:05:09  #12  put      photos/cats/tom.png  1.2 MiB  image/png  3f2a9c0d11e4b7a8`.
    static func line(_ change: BlobChange, utcOffset: Int? = nil) -> String {
        let head = "\(Formatting.date(change.date, utcOffset: utcOffset))  #\(change.sequence)  "
        switch change.kind {
        case .put(let metadata):
            var text = head + "put       \(change.store)/\(metadata.identifier)  \(Formatting.size(metadata.size))  \(metadata.contentType)"
            if let image = metadata.image { text += "  \(Formatting.pixels(image))" }
            return text + "  \(metadata.etag)"
        case .removed(let identifier):
            return head + "removed   \(change.store)/\(identifier)"
        case .removedAll:
            return head + "removed-all  \(change.store)"
        }
    }
}
