import BlobStore

/// `blob ls STORE[/PREFIX]`: lists blobs.
struct LsCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "ls",
        abstract: "List the blobs of a store.",
        discussion: """
            Lists one page (--limit, default 1000) of the blobs whose identifiers start with PREFIX, with \
            size, modification date, content type and identifier. When there are more, the cursor for the next \
            page is printed on standard error (with --json, as "nextCursor"); --all follows the cursors to the end.
            """,
        arguments: [ArgumentSpec("STORE[/PREFIX]", help: "The store, optionally with an identifier prefix after the first '/'.")],
        options: [
            OptionSpec("type", .value(metavar: "PREFIX"), help: "Only blobs whose content type starts with PREFIX (e.g. image/)."),
            OptionSpec("sort", .value(metavar: "ORDER"), help: "identifier (default, byte order) or modified (oldest first)."),
            OptionSpec("limit", .value(metavar: "N"), help: "At most N blobs per page, 1...\(ListQuery.maximumLimit) (default 1000)."),
            OptionSpec("cursor", .value(metavar: "CURSOR"), help: "Continue after the page that returned CURSOR."),
            OptionSpec("all", help: "Follow the cursors: list every matching blob."),
        ],
        examples: ["blob ls photos/cats/", "blob ls photos --type image/ --sort modified --all", "blob --json ls photos --limit 100 --cursor i6361"])

    let store: String
    let query: ListQuery
    let all: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = Self.spec.name
        let (store, prefix) = Self.split(arguments.positionals[0])
        self.store = store
        try BlobAddress.checkStore(store, command: name)
        var query = ListQuery(prefix: prefix)
        if let type = arguments.value("type") { query.contentTypePrefix = type }
        if let sort = arguments.value("sort") { query.sort = try ValueParsing.sort(sort, command: name) }
        if let limit = arguments.value("limit") {
            query.limit = try ValueParsing.integer(limit, option: "limit", in: 1...ListQuery.maximumLimit, command: name)
        }
        query.cursor = arguments.value("cursor")
        self.query = query
        all = arguments.flag("all")
    }

    /// `STORE/PREFIX` → (`STORE`, `PREFIX`); `STORE` → (`STORE`, "").
    static func split(_ text: String) -> (store: String, prefix: String) {
        guard let slash = text.firstIndex(of: "/") else { return (text, "") }
        return (String(text[..<slash]), String(text[text.index(after: slash)...]))
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.backend.readOnlyStore(self.store)
        var query = self.query
        var items: [BlobMetadata] = []
        var printedHeader = false
        var nextCursor: String?
        var firstPage = true
        while true {
            let page = try await store.list(query)
            // A store that does not exist lists as empty on some backends (the daemon's client):
            // ask whether it exists before printing nothing.
            if firstPage, page.items.isEmpty, try await !context.backend.storeExists(self.store) {
                throw CLIError.storeNotFound(store: self.store, location: context.backend.location)
            }
            firstPage = false
            nextCursor = page.nextCursor
            if context.json {
                items += page.items
            } else if !page.items.isEmpty {
                try await context.console.print(Self.table(page.items, header: !printedHeader))
                printedHeader = true
            }
            guard all, let next = page.nextCursor else { break }
            query.cursor = next
        }
        if context.json {
            let value = JSONValue.object([
                ("store", .string(self.store)), ("prefix", .string(query.prefix)),
                ("items", .array(items.map { JSONOutput.metadata($0, store: self.store) })),
                ("nextCursor", nextCursor.map(JSONValue.string) ?? .null),
            ])
            try await context.console.print(value.serialized(pretty: true))
        } else if let nextCursor {
            await context.console.printError("more blobs follow: add --cursor \(nextCursor) for the next page, or --all")
        }
    }

    /// `SIZE  MODIFIED  TYPE  [EXPIRES]  IDENTIFIER` rows; sizes right-aligned, types padded to at least 24 columns.
    static func table(_ items: [BlobMetadata], header: Bool, utcOffset: Int? = nil) -> String {
        // An EXPIRES column only on a page where some blob expires (cache mode), before the identifier.
        let expiring = items.contains { $0.expires != nil }
        var rows: [[String]] = header ? [["SIZE", "MODIFIED", "TYPE"] + (expiring ? ["EXPIRES"] : []) + ["IDENTIFIER"]] : []
        let typeWidth = max(24, items.map(\.contentType.count).max() ?? 0)
        for item in items {
            let type = item.contentType + String(repeating: " ", count: max(0, typeWidth - item.contentType.count))
            let expires = expiring ? [item.expires.map { Formatting.date($0, utcOffset: utcOffset) } ?? "-"] : []
            rows.append([Formatting.size(item.size), Formatting.date(item.modified, utcOffset: utcOffset), type] + expires + [item.identifier])
        }
        if header { rows[0][2] += String(repeating: " ", count: typeWidth - 4) }
        // Fixed size column so pages printed one after another line up.
        return Formatting.columns(rows.map { row in
            [String(repeating: " ", count: max(0, 10 - row[0].count)) + row[0]] + row.dropFirst()
        }, alignments: [.right])
    }
}
