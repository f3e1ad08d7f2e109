import BlobStore

/// `blob stat STORE/ID`: shows a blob's metadata.
struct StatCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "stat",
        abstract: "Show a blob's metadata.",
        discussion: "Size, content type, ETag, creation and modification dates, user metadata, and for images the format and pixel size.",
        arguments: [ArgumentSpec("STORE/ID", help: "The store and the blob's identifier (split at the first '/').")],
        examples: ["blob stat photos/cats/tom.png", "blob --json stat photos/cats/tom.png | jq .etag"])

    let address: BlobAddress

    init(_ arguments: ParsedArguments) throws(UsageError) {
        address = try BlobAddress.parse(arguments.positionals[0], command: Self.spec.name)
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.backend.readOnlyStore(address.store)
        let metadata = try await store.head(address.identifier)
        try await context.emit(
            json: JSONOutput.metadata(metadata, store: address.store),
            text: Formatting.metadataBlock(metadata, store: address.store))
    }
}
