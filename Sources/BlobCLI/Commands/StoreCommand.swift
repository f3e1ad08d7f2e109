import BlobClient
import BlobProtocol
import BlobStore

/// `blob store create|set|show NAME`: a store's cache policy (limits and default time to live) and
/// its usage against it.
struct StoreCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "store",
        abstract: "Create a store with a cache policy, change its policy, or show it with its usage.",
        discussion: """
            'create' creates the store if needed and gives it exactly the limits given (those left out are lifted). \
            'set' changes only the limits given of an existing store ('none' lifts one). 'show' prints the policy \
            and the usage against it. Over a limit, the store evicts its least recently used blobs; a blob put \
            without its own expiry lives for the default time to live (--ttl). SIZE is bytes or a number with K, M, \
            G or T (powers of 1024: 2G is 2,147,483,648 bytes); DURATION is seconds or a number with s, m, h, d or w.
            """,
        arguments: [
            ArgumentSpec("create|set|show", help: "What to do."),
            ArgumentSpec("NAME", help: "The store's name."),
        ],
        options: [
            OptionSpec("max-size", .value(metavar: "SIZE"), help: "Content bytes the store may hold, e.g. 2G ('none': no limit)."),
            OptionSpec("max-count", .value(metavar: "N"), help: "Blobs the store may hold ('none': no limit)."),
            OptionSpec("ttl", .value(metavar: "DURATION"), help: "Default time to live of a blob put without its own expiry, e.g. 7d ('none': never expire)."),
        ],
        examples: [
            "blob store create photos --max-size 2G --ttl 7d",
            "blob store set photos --max-count 100000 --ttl none",
            "blob store show photos",
        ])

    enum Action: String, CaseIterable {
        case create, set, show
    }

    let action: Action
    let name: String
    let update: PolicyJSON.Update

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let command = Self.spec.name
        guard let action = Action(rawValue: arguments.positionals[0]) else {
            throw UsageError("unknown action '\(arguments.positionals[0])'; use create, set or show", command: command)
        }
        self.action = action
        name = arguments.positionals[1]
        try BlobAddress.checkStore(name, command: command)
        var update = PolicyJSON.Update()
        // `create` sets the whole policy, so a limit it leaves out is lifted.
        if action == .create { update = PolicyJSON.Update(maximumBytes: .some(nil), maximumCount: .some(nil), defaultTimeToLive: .some(nil)) }
        func lifted(_ text: String) -> Bool { text == PolicyUnits.none }
        if let text = arguments.value("max-size") {
            update.maximumBytes = .some(lifted(text) ? nil : try PolicyUnits.size(text, option: "max-size", command: command))
        }
        if let text = arguments.value("max-count") {
            update.maximumCount = .some(lifted(text) ? nil : try PolicyUnits.count(text, option: "max-count", command: command))
        }
        if let text = arguments.value("ttl") {
            update.defaultTimeToLive = .some(lifted(text) ? nil : try PolicyUnits.duration(text, option: "ttl", command: command))
        }
        let given = ["max-size", "max-count", "ttl"].filter { arguments.value($0) != nil }
        switch action {
        case .show where !given.isEmpty:
            throw UsageError("'store show' takes no --\(given[0]); use 'store set' to change the policy", command: command)
        case .set where given.isEmpty:
            throw UsageError("'store set' needs at least one of --max-size, --max-count, --ttl", command: command)
        default: break
        }
        self.update = update
    }

    func run(_ context: CommandContext) async throws {
        let status: StoreStatus
        switch action {
        case .show: status = try await context.backend.storeStatus(name)
        case .create: status = try await context.backend.updatePolicy(name, update, create: true)
        case .set: status = try await context.backend.updatePolicy(name, update, create: false)
        }
        try await context.emit(json: Self.json(status), text: Self.block(status))
    }

    /// `{"name","count","bytes","policy":{"maxBytes","maxCount","defaultTTL"}}`, `null` for no limit,
    /// the time to live in whole seconds (rounded up).
    static func json(_ status: StoreStatus) -> JSONValue {
        let policy = status.policy
        return .object([
            ("name", .string(status.name)), ("count", .int(Int64(status.statistics.count))), ("bytes", .int(status.statistics.bytes)),
            ("policy", .object([
                ("maxBytes", policy.maximumBytes.map(JSONValue.int) ?? .null),
                ("maxCount", policy.maximumCount.map { .int(Int64($0)) } ?? .null),
                ("defaultTTL", policy.defaultTimeToLive.map { .int((PolicyJSON.milliseconds($0) + 999) / 1000) } ?? .null),
            ])),
        ])
    }

    /// The block `store` prints: usage against each limit, and the default time to live.
    static func block(_ status: StoreStatus) -> String {
        let (statistics, policy) = (status.statistics, status.policy)
        func share(_ used: Double, _ limit: Double) -> String { " (\(Int((used / limit * 100).rounded()))%)" }
        let size = Formatting.size(statistics.bytes)
            + (policy.maximumBytes.map { " of " + Formatting.size($0) + share(Double(statistics.bytes), Double($0)) } ?? " (no limit)")
        let count = Formatting.count(statistics.count)
            + (policy.maximumCount.map { " of " + Formatting.count($0) + share(Double(statistics.count), Double($0)) } ?? " (no limit)")
        return Formatting.columns([
            ["Store:", status.name],
            ["Size:", size],
            ["Blobs:", count],
            ["Default TTL:", policy.defaultTimeToLive.map(PolicyUnits.describe) ?? "none (blobs never expire unless put with an expiry)"],
        ])
    }
}
