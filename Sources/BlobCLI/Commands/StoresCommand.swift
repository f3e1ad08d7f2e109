import BlobStore

/// `blob stores`: lists the stores with their totals.
struct StoresCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "stores",
        abstract: "List the stores with their blob counts and sizes.",
        discussion: "With --root, the stores are the folders under DIR whose names are valid store names. Through blobd, COUNT and SIZE are shown for the stores blobd has open (\"-\" for the others), and a store another process holds is noted. A store with a limit shows it after its usage (\"12 / 1,000\", \"1.0 MiB / 2.0 GiB\"); a TTL column appears when some store has a default time to live.",
        examples: ["blob --root ~/blobs stores", "blob --json stores"])

    init(_ arguments: ParsedArguments) throws(UsageError) {}

    func run(_ context: CommandContext) async throws {
        let stores = try await context.backend.storesWithPolicies()
        if context.json {
            try await context.console.print(
                JSONValue.object([("stores", .array(stores.map { JSONOutput.store($0.summary, policy: $0.policy) }))]).serialized(pretty: true))
            return
        }
        guard !stores.isEmpty else {
            await context.console.printError("no stores (\(context.backend.location))")
            return
        }
        // The daemon knows the totals of the stores it has open only; the others show "-", and a
        // note when another process holds them. Limits show as "used / limit"; a TTL column only
        // when some store has a default time to live.
        let notes = stores.contains { $0.summary.heldBy != nil }
        let ttls = stores.contains { $0.policy?.defaultTimeToLive != nil }
        var rows = [["NAME", "COUNT", "SIZE"] + (ttls ? ["TTL"] : []) + (notes ? ["NOTE"] : [])]
        for (store, policy) in stores {
            var count = store.statistics.map { Formatting.count($0.count) } ?? "-"
            if let limit = policy?.maximumCount { count += " / " + Formatting.count(limit) }
            var size = store.statistics.map { Formatting.size($0.bytes) } ?? "-"
            if let limit = policy?.maximumBytes { size += " / " + Formatting.size(limit) }
            var row = [store.name, count, size]
            if ttls { row.append(policy?.defaultTimeToLive.map(PolicyUnits.describe) ?? "-") }
            if notes { row.append(store.heldBy.map { "held by \($0)" } ?? "") }
            rows.append(row)
        }
        try await context.console.print(
            Formatting.columns(rows, alignments: [.left, .right, .right] + (ttls ? [.right] : []) + (notes ? [.left] : [])))
    }
}
