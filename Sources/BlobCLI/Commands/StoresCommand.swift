import BlobStore

/// `blob stores`: lists the stores with their totals.
struct StoresCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "stores",
        abstract: "List the stores with their blob counts and sizes.",
        discussion: "With --root, the stores are the folders under DIR whose names are valid store names.",
        examples: ["blob --root ~/blobs stores", "blob --json stores"])

    init(_ arguments: ParsedArguments) throws(UsageError) {}

    func run(_ context: CommandContext) async throws {
        let stores = try await context.backend.stores()
        if context.json {
            try await context.console.print(JSONValue.object([("stores", .array(stores.map(JSONOutput.store)))]).serialized(pretty: true))
            return
        }
        guard !stores.isEmpty else {
            await context.console.printError("no stores (\(context.backend.location))")
            return
        }
        var rows = [["NAME", "COUNT", "SIZE"]]
        for store in stores {
            rows.append([store.name, Formatting.count(store.statistics.count), Formatting.size(store.statistics.bytes)])
        }
        try await context.console.print(Formatting.columns(rows, alignments: [.left, .right, .right]))
    }
}
