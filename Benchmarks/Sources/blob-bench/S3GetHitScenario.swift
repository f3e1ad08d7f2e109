/// `s3-get-hit`: GET of 4 KiB blobs that are in blobd's read cache, against GET of the same objects
/// from the gateway directly, with the same 16 connections (issue 19: a cache hit ≥ 10× direct).
///
/// Two blobds over the same objects, each with its own cache, kept for the whole case and warmed by
/// reading every blob: one with the default staleness bound 0, where every hit is still validated
/// with a conditional GET (`304 Not Modified` from the gateway), and one with a bound of
/// ``staleness`` seconds, which serves a hit without asking the gateway. The target row is the
/// second: with bound 0 each hit still costs the gateway a request, so it cannot be many times faster
/// than the gateway itself; it is measured as it is and reported beside it.
struct S3GetHitScenario: Scenario {
    /// The staleness bound of the second blobd, seconds: longer than a whole case, so every timed
    /// GET is served from the cache.
    static let staleness = 600

    var name: String { "s3-get-hit" }
    var summary: String {
        "blobd on S3 GET 4 KiB ×16 from its read cache (validated with a 304, and within a \(Self.staleness) s staleness bound) vs the same GETs from the Ceph gateway directly (brings up Ceph)"
    }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        guard let gateway = try await S3Variants.gateway(for: name) else { return [] }
        defer { gateway.stop() }
        let sockets = try SocketHome()
        defer { sockets.remove() }
        let bytes = BlobSize.small
        let connections = 16
        let workload = Workload(blobBytes: bytes, count: context.count(1000, quick: 300))
        let identifiers = workload.identifiers
        let prefix = S3Variants.freshPrefix("h")
        var servers: [any BenchServer] = []
        defer { for server in servers { server.stop() } }
        let validated = try S3Blobd(bucket: gateway.bucket, prefix: prefix, folder: try context.spreadFolder("validated"), socketPath: sockets.socket("v"))
        servers.append(validated)
        try await DaemonVariants.populate(validated, workload)
        let bounded = try S3Blobd(
            bucket: gateway.bucket, prefix: prefix, folder: try context.spreadFolder("bounded"), socketPath: sockets.socket("b"),
            arguments: ["--cache-staleness", String(Self.staleness)])
        servers.append(bounded)

        /// `count` GETs cycling through every blob, starting at a random one.
        @Sendable func cycle(_ count: Int) -> [String] {
            let start = Int.random(in: 0..<identifiers.count)
            return (0..<count).map { identifiers[(start + $0) % identifiers.count] }
        }
        // The warm-up reads every blob twice: whatever the first read leaves to be cached is there by the timed part.
        let warmups = 2 * identifiers.count
        let slowGets = context.count(4000, quick: 1500)
        let fastGets = context.count(40_000, quick: 12_000)
        let direct = "direct×\(connections)"
        let validatedName = "blobd hit, validated×\(connections)"
        let boundedName = "blobd hit, ≤\(Self.staleness) s stale×\(connections)"
        let sinks = [(variant: validatedName, sink: S3CPUSink()), (variant: boundedName, sink: S3CPUSink()), (variant: direct, sink: S3CPUSink())]
        let variants = [
            S3Variants.http(
                name: validatedName, kind: .store, connections: connections, operations: slowGets, target: .blobd(.shared(validated)),
                gateway: gateway, sink: sinks[0].sink, latency: LatencySink(),
                plans: { _ in (S3Variants.blobdGets(cycle(warmups), workload: workload), S3Variants.blobdGets(cycle(slowGets), workload: workload)) }),
            S3Variants.http(
                name: boundedName, kind: .store, connections: connections, operations: fastGets, target: .blobd(.shared(bounded)),
                gateway: gateway, sink: sinks[1].sink, latency: LatencySink(),
                plans: { _ in (S3Variants.blobdGets(cycle(warmups), workload: workload), S3Variants.blobdGets(cycle(fastGets), workload: workload)) }),
            S3Variants.http(
                name: direct, kind: .peer, connections: connections, operations: slowGets, target: .gateway, gateway: gateway,
                sink: sinks[2].sink, latency: LatencySink(),
                plans: { _ in
                    (
                        S3Variants.gatewayGets(cycle(S3Variants.warmupCount(slowGets)), prefix: prefix, gateway: gateway, workload: workload),
                        S3Variants.gatewayGets(cycle(slowGets), prefix: prefix, gateway: gateway, workload: workload)
                    )
                }),
        ]
        var result = try await context.measure(
            scenario: name, label: "\(BlobSize.label(bytes)) ×\(connections)", blobBytes: bytes, variants: variants,
            comparisons: [
                Comparison(store: boundedName, raw: nil, article: nil, peer: direct),
                Comparison(store: validatedName, raw: nil, article: nil, peer: direct),
            ])
        // The target applies to the bounded row; the validated row has none (see the type's comment).
        result.figures += S3Variants.figures(result, sinks: sinks, targets: [(boundedName, direct, 10), (validatedName, direct, nil)])
        return [result]
    }
}
