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
        let console = context.console
        let changes = try await context.backend.changes(store) { status in
            let text: String
            switch status {
            case .reconnecting: text = "blob: lost the connection to the daemon; reconnecting…"
            case .resumed(let last): text = "blob: reconnected; resuming" + (last.map { " after event #\($0)" } ?? "")
            }
            Task { await console.printError(text) }
        }
        for await change in changes {
            let line = context.json ? JSONOutput.change(change).serialized() : Self.line(change)
            try await context.console.print(line)
        }
    }

    /// One line per change in fixed-width columns, so lines printed one at a time line up:
    /// date (19), `#SEQUENCE` (at least 8), kind (11: `put`, `removed`, `expired`, `evicted`, `removed-all`), size (10, right-aligned),
    /// content type (at least 24), ETag (16), then `STORE/ID` and for images the pixel size. Removals
    /// leave size, type and ETag blank.
    static func line(_ change: BlobChange, utcOffset: Int? = nil) -> String {
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        func padLeft(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        let head = Formatting.date(change.date, utcOffset: utcOffset) + "  " + pad("#\(change.sequence)", 8) + "  "
        let blank = String(repeating: " ", count: 10 + 2 + 24 + 2 + 16 + 2)
        switch change.kind {
        case .put(let metadata):
            var text = head + pad("put", 11) + "  " + padLeft(Formatting.size(metadata.size), 10) + "  "
            text += pad(metadata.contentType, 24) + "  " + metadata.etag.rawValue + "  " + "\(change.store)/\(metadata.identifier)"
            if let image = metadata.image { text += "  \(Formatting.pixels(image))" }
            return text
        case .removed(let identifier):
            // A removal by the store's policy says which (cache mode).
            let kind = change.reason == .expired ? "expired" : change.reason == .evicted ? "evicted" : "removed"
            return head + pad(kind, 11) + "  " + blank + "\(change.store)/\(identifier)"
        case .removedAll:
            return head + pad("removed-all", 11) + "  " + blank + change.store
        }
    }
}
