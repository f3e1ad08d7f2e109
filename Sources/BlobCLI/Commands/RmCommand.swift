import BlobStore

/// `blob rm STORE/ID…`: removes blobs.
struct RmCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "rm",
        abstract: "Remove blobs.",
        discussion: """
            Removes each blob in turn; a failure is reported and the others are still removed, and the exit \
            status is that of the first failure. A blob that does not exist is an error (exit 2) unless \
            --force is given.
            """,
        arguments: [ArgumentSpec("STORE/ID", help: "The blobs to remove (each split at its first '/').", variadic: true)],
        options: [
            OptionSpec("if-match", .value(metavar: "ETAG"), help: "Remove only if the current ETag is ETAG (exit 3 otherwise); one blob only."),
            OptionSpec("force", short: "f", help: "Do not treat a missing blob or store as an error."),
        ],
        examples: ["blob rm photos/cats/tom.png photos/cats/felix.png", "blob rm photos/a.png --if-match 3f2a9c0d11e4b7a8"])

    let addresses: [BlobAddress]
    let condition: WriteCondition
    let force: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = Self.spec.name
        var addresses: [BlobAddress] = []
        for text in arguments.positionals { addresses.append(try BlobAddress.parse(text, command: name)) }
        self.addresses = addresses
        if let tag = arguments.value("if-match") {
            guard addresses.count == 1 else {
                throw UsageError("'--if-match' applies to one blob (got \(addresses.count))", command: name)
            }
            condition = .ifMatch(try ValueParsing.etag(tag, option: "if-match", command: name))
        } else {
            condition = .none
        }
        force = arguments.flag("force")
    }

    func run(_ context: CommandContext) async throws {
        var firstError: (any Error)?
        var results: [JSONValue] = []
        for address in addresses {
            do {
                let store = try await context.backend.store(address.store, create: false)
                let existed = try await store.remove(address.identifier, condition: condition)
                if !existed && !force { throw BlobStoreError.notFound(store: address.store, identifier: address.identifier) }
                results.append(.object([("store", .string(address.store)), ("identifier", .string(address.identifier)), ("existed", .bool(existed))]))
                if !context.json && existed { try await context.console.print("removed \(address)") }
            } catch CLIError.storeNotFound where force {
                results.append(.object([("store", .string(address.store)), ("identifier", .string(address.identifier)), ("existed", .bool(false))]))
            } catch {
                if addresses.count == 1 || (error as? CLIError)?.isBrokenPipe == true { throw error }
                await context.console.printError("blob: \(BlobCLI.message(for: error))")
                if firstError == nil { firstError = ReportedError(underlying: error) }
            }
        }
        if context.json { try await context.console.print(JSONValue.object([("removed", .array(results))]).serialized(pretty: true)) }
        if let firstError { throw firstError }
    }
}

/// An error already printed; only its exit status is still to be used.
struct ReportedError: Error {
    let underlying: any Error
}
