import BlobStore
import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `blob put STORE/ID [FILE|-]`: stores a file or standard input, streamed.
struct PutCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "put",
        abstract: "Store a blob from a file or standard input.",
        discussion: """
            The content is streamed: it is never held in memory whole. Without FILE, or with '-', it is read \
            from standard input. An existing blob with the same identifier is replaced (atomically) unless \
            --if-none-match or --if-match says otherwise. Prints the stored blob's metadata.
            """,
        arguments: [
            ArgumentSpec("STORE/ID", help: "The store and the blob's identifier (split at the first '/'); ending with '/', FILE's name is appended."),
            ArgumentSpec("FILE|-", help: "The file to store; '-' or absent: standard input.", optional: true),
        ],
        options: [
            OptionSpec("type", .value(metavar: "MIME"), help: "Content type TYPE/SUBTYPE[; name=value] (default: the image type if recognised, else guessed from the file name's extension, else application/octet-stream)."),
            OptionSpec("meta", .repeatable(metavar: "KEY=VALUE"), help: "User metadata pair; repeat for more (keys: a-z, 0-9, '-', '_')."),
            OptionSpec("image", help: "Refuse content that is not a recognised image (exit 4)."),
            OptionSpec("record", help: "Refuse content that is not a JSON document (exit 4); type application/json."),
            OptionSpec("if-none-match", help: "Create only: fail (exit 3) if the blob exists."),
            OptionSpec("if-match", .value(metavar: "ETAG"), help: "Replace only if the current ETag is ETAG (exit 3 otherwise)."),
            OptionSpec("ttl", .value(metavar: "DURATION"), help: "Expire the blob this long after the put, e.g. 1h (s, m, h, d, w; default: the store's default time to live)."),
            OptionSpec("expires", .value(metavar: "DATE"), help: "Expire the blob at DATE (RFC 3339, or a day such as 2026-12-01 at midnight UTC); 'never': not even by the store's default."),
        ],
        examples: [
            "blob --root ~/blobs put photos/cats/tom.png tom.png --image --meta owner=ann",
            "curl -s https://example.com/data.json | blob put records/today --record",
            "blob put photos/a.png new.png --if-match 3f2a9c0d11e4b7a8",
        ])

    let address: BlobAddress
    let file: String?
    let options: PutOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = Self.spec.name
        let file = arguments.positionals.count > 1 ? arguments.positionals[1] : "-"
        self.file = file == "-" ? nil : file
        address = try Self.address(arguments.positionals[0], file: self.file)
        if arguments.flag("image") && arguments.flag("record") {
            throw UsageError("'--image' and '--record' cannot be used together", command: name)
        }
        if arguments.flag("if-none-match") && arguments.value("if-match") != nil {
            throw UsageError("'--if-none-match' and '--if-match' cannot be used together", command: name)
        }
        var condition = WriteCondition.none
        if arguments.flag("if-none-match") { condition = .ifNoneMatch }
        if let tag = arguments.value("if-match") {
            condition = .ifMatch(try ValueParsing.etag(tag, option: "if-match", command: name))
        }
        let validation: ContentValidation = arguments.flag("image") ? .image : arguments.flag("record") ? .record : .none
        var type = arguments.value("type")
        if let given = type {
            if given.isEmpty { throw UsageError("'--type' needs a MIME type", command: name) }
            if let problem = ContentTypes.violation(given) {
                throw UsageError("'--type \(given)' is not a media type: \(problem)", command: name)
            }
        } else if validation == .none {
            // Named after the local file when there is one, else after the identifier. With --image or
            // --record the content decides (the image's type; application/json).
            type = ContentTypes.guess(forName: self.file ?? address.identifier)
        }
        var expiry = BlobExpiry.storeDefault
        if let text = arguments.value("ttl") {
            guard arguments.value("expires") == nil else { throw UsageError("'--ttl' and '--expires' cannot be used together", command: name) }
            expiry = .after(try PolicyUnits.duration(text, option: "ttl", command: name))
        } else if let text = arguments.value("expires") {
            expiry = try PolicyUnits.expiry(text, option: "expires", command: name)
        }
        options = PutOptions(
            contentType: type, userMetadata: try ValueParsing.metadata(arguments.values("meta"), command: name),
            condition: condition, validation: validation, expiry: expiry)
    }

    /// `STORE/ID`, or `STORE/PREFIX/` with a `FILE`: the file's name appended (as `cp FILE DIR/`).
    static func address(_ text: String, file: String?) throws(UsageError) -> BlobAddress {
        let name = spec.name
        guard text.hasSuffix("/") else { return try BlobAddress.parse(text, command: name) }
        guard let file else {
            throw UsageError("'\(text)' ends with '/': give a FILE to take the blob's name from, or the whole STORE/ID", command: name)
        }
        guard let base = file.split(separator: "/").last.map(String.init), base != ".", base != ".." else {
            throw UsageError("cannot name a blob after '\(file)'; give the whole STORE/ID", command: name)
        }
        return try BlobAddress.parse(text + base, command: name)
    }

    func run(_ context: CommandContext) async throws {
        let source: FileDescriptor
        let sourceName: String
        var total: Int64?
        if let file {
            sourceName = file
            do { source = try FileDescriptor.open(file, [.readOnly]) } catch {
                throw CLIError.localIO(operation: "open", path: file, errno: error)
            }
            if let status = try? source.status(), status.kind == .regular { total = status.size }
        } else {
            sourceName = "standard input"
            source = FileDescriptor(rawValue: context.console.input)
            if context.console.inputIsTerminal {
                await context.console.printError("blob: reading \(address) from standard input; end with Ctrl-D")
            }
        }
        defer { if file != nil { try? source.close() } }

        let store = try await context.backend.store(address.store, create: true)
        // No progress while someone types the content: the line would mix with their typing.
        let progress = context.progress("put \(address)", total: total, enabled: file != nil || !context.console.inputIsTerminal)
        let chunks = DescriptorChunks(descriptor: source, name: sourceName, chunkSize: 1 << 20) { progress.add($0) }
        let metadata: BlobMetadata
        do {
            metadata = try await store.put(chunks: chunks, identifier: address.identifier, options: options)
            progress.finish()
        } catch {
            progress.finish()
            throw error
        }
        try await context.emit(
            json: JSONOutput.metadata(metadata, store: address.store),
            text: Formatting.metadataBlock(metadata, store: address.store))
    }
}
