import BlobStore

/// `blob stores`: lists the stores with their totals.
struct StoresCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "stores",
        abstract: "List the stores with their blob counts and sizes.",
        discussion: "With --root, the stores are the folders under DIR whose names are valid store names. Through blobd, COUNT and SIZE are shown for the stores blobd has open (\"-\" for the others), and a store another process holds is noted.",
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
        // The daemon knows the totals of the stores it has open only; the others show "-", and a
        // note when another process holds them.
        let notes = stores.contains { $0.heldBy != nil }
        var rows = [["NAME", "COUNT", "SIZE"] + (notes ? ["NOTE"] : [])]
        for store in stores {
            var row = [store.name, store.statistics.map { Formatting.count($0.count) } ?? "-", store.statistics.map { Formatting.size($0.bytes) } ?? "-"]
            if notes { row.append(store.heldBy.map { "held by \($0)" } ?? "") }
            rows.append(row)
        }
        try await context.console.print(Formatting.columns(rows, alignments: [.left, .right, .right] + (notes ? [.left] : [])))
    }
}
