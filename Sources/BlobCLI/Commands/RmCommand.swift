import BlobStore
import Foundation

/// `blob rm STORE/ID…` removes blobs; `blob rm -r STORE[/PREFIX]…` removes every blob under a prefix
/// (or of the whole store), after a confirmation.
struct RmCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "rm",
        abstract: "Remove blobs, or with -r every blob under a prefix.",
        discussion: """
            Removes each blob in turn; a failure is reported and the others are still removed, and the exit \
            status is that of the first failure. A blob that does not exist is an error (exit 2) unless \
            --force is given. With -r (--recursive), each argument is STORE/PREFIX, STORE/ or STORE, and every \
            blob whose identifier starts with PREFIX (every blob of the store without one) is removed. -r asks \
            for confirmation on the terminal first; --yes skips the question, and is required when standard \
            input is not a terminal.
            """,
        arguments: [ArgumentSpec("STORE/ID", help: "The blobs to remove (each split at its first '/'); with -r, STORE[/PREFIX].", variadic: true)],
        options: [
            OptionSpec("recursive", short: "r", help: "Remove every blob whose identifier starts with PREFIX (all of the store's without one)."),
            OptionSpec("yes", short: "y", help: "Do not ask for confirmation (needed with -r when standard input is not a terminal)."),
            OptionSpec("if-match", .value(metavar: "ETAG"), help: "Remove only if the current ETag is ETAG (exit 3 otherwise); one blob only."),
            OptionSpec("force", short: "f", help: "Do not treat a missing blob or store, or a prefix matching nothing, as an error."),
        ],
        examples: [
            "blob rm photos/cats/tom.png photos/cats/felix.png", "blob rm photos/a.png --if-match 3f2a9c0d11e4b7a8",
            "blob rm -r photos/cats/", "blob rm -r --yes scratch",
        ])

    /// What to remove: one blob, or every blob under a prefix.
    enum Target: Sendable {
        case blob(BlobAddress)
        case prefix(store: String, prefix: String)
    }

    let targets: [Target]
    let condition: WriteCondition
    let force: Bool
    let confirmed: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = Self.spec.name
        var targets: [Target] = []
        let recursive = arguments.flag("recursive")
        for text in arguments.positionals {
            if recursive {
                let (store, prefix) = LsCommand.split(text)
                try BlobAddress.checkStore(store, command: name)
                targets.append(.prefix(store: store, prefix: prefix))
            } else {
                if !text.contains("/") || text.hasSuffix("/") {
                    throw UsageError("'\(text)' names no blob; to remove every blob under it, add -r", command: name)
                }
                targets.append(.blob(try BlobAddress.parse(text, command: name)))
            }
        }
        self.targets = targets
        if let tag = arguments.value("if-match") {
            if recursive { throw UsageError("'--if-match' applies to one blob, not to -r", command: name) }
            guard targets.count == 1 else {
                throw UsageError("'--if-match' applies to one blob (got \(targets.count))", command: name)
            }
            condition = .ifMatch(try ValueParsing.etag(tag, option: "if-match", command: name))
        } else {
            condition = .none
        }
        force = arguments.flag("force")
        confirmed = arguments.flag("yes")
    }

    func run(_ context: CommandContext) async throws {
        let prefixed = targets.contains { if case .prefix = $0 { return true } else { return false } }
        if prefixed && !confirmed && !context.console.inputIsTerminal {
            throw UsageError("'rm -r' needs --yes when standard input is not a terminal (nobody can confirm)", command: Self.spec.name)
        }
        var firstError: (any Error)?
        var results: [JSONValue] = []
        func record(_ address: BlobAddress, existed: Bool) {
            results.append(.object([("store", .string(address.store)), ("identifier", .string(address.identifier)), ("existed", .bool(existed))]))
        }
        for target in targets {
            do {
                switch target {
                case .blob(let address):
                    do {
                        let store = try await context.backend.store(address.store, create: false)
                        let existed = try await store.remove(address.identifier, condition: condition)
                        if !existed && !force { throw BlobStoreError.notFound(store: address.store, identifier: address.identifier) }
                        record(address, existed: existed)
                        if !context.json && existed { try await context.console.print("removed \(address)") }
                    } catch CLIError.storeNotFound where force {
                        record(address, existed: false)
                    }
                case .prefix(let storeName, let prefix):
                    let identifiers: [String]
                    let store: any BlobStoring
                    do {
                        store = try await context.backend.store(storeName, create: false)
                        identifiers = try await Self.identifiers(in: store, prefix: prefix, backend: context.backend, storeName: storeName)
                    } catch CLIError.storeNotFound where force {
                        continue
                    }
                    let what = prefix.isEmpty ? "store '\(storeName)'" : "store '\(storeName)' under prefix '\(prefix)'"
                    if identifiers.isEmpty {
                        if force { continue }
                        throw CLIError.nothingMatches(what: what)
                    }
                    if !confirmed {
                        let count = Formatting.count(identifiers.count)
                        try await context.console.error.write(Data("Remove \(prefix.isEmpty ? "all " : "")\(count) blob\(identifiers.count == 1 ? "" : "s") of \(what)? [y/N] ".utf8))
                        let answer = try await context.console.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                        guard answer == "y" || answer == "yes" else { throw CLIError.notConfirmed(what: "nothing removed from \(what)") }
                    }
                    for identifier in identifiers {
                        let address = BlobAddress(store: storeName, identifier: identifier)
                        // Removed meanwhile by someone else: that is what was asked for.
                        let existed = try await store.remove(identifier, condition: .none)
                        record(address, existed: existed)
                        if !context.json && existed { try await context.console.print("removed \(address)") }
                    }
                }
            } catch {
                if targets.count == 1 || (error as? CLIError)?.isBrokenPipe == true { throw error }
                await context.console.printError("blob: \(BlobCLI.message(for: error))")
                if firstError == nil { firstError = ReportedError(underlying: error) }
            }
        }
        if context.json { try await context.console.print(JSONValue.object([("removed", .array(results))]).serialized(pretty: true)) }
        if let firstError { throw firstError }
    }

    /// Every identifier starting with `prefix`, following the listing's cursors; a store that does
    /// not exist is ``CLIError/storeNotFound(store:location:)``.
    static func identifiers(in store: any BlobStoring, prefix: String, backend: any BlobBackend, storeName: String) async throws -> [String] {
        var query = ListQuery(prefix: prefix)
        query.limit = ListQuery.maximumLimit
        var result: [String] = []
        while true {
            let page = try await store.list(query)
            result += page.items.map(\.identifier)
            guard let next = page.nextCursor else { break }
            query.cursor = next
        }
        if result.isEmpty, try await !backend.storeExists(storeName) {
            throw CLIError.storeNotFound(store: storeName, location: backend.location)
        }
        return result
    }
}

/// An error already printed; only its exit status is still to be used.
struct ReportedError: Error {
    let underlying: any Error
}
