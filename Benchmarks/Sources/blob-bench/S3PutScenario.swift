/// `s3-put-4k` and `s3-put-4m`: PUT of new blobs through blobd on S3 against PUT of the same bytes
/// to the gateway directly, with the same connections (issue 19: blobd ≥ 0.9× direct). blobd is
/// started fresh (empty read cache) for each run; the direct PUTs go to another prefix of the same bucket.
struct S3PutScenario: Scenario {
    /// Blob size.
    let bytes: Int
    /// Connections, for blobd and for the gateway alike.
    let connections: Int

    var name: String { bytes >= 1 << 20 ? "s3-put-\(bytes >> 20)m" : "s3-put-\(bytes >> 10)k" }
    var summary: String {
        "blobd on S3 PUT \(BlobSize.label(bytes)) ×\(connections) connections vs the same PUTs to the Ceph gateway directly (brings up Ceph)"
    }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        guard let gateway = try await S3Variants.gateway(for: name) else { return [] }
        defer { gateway.stop() }
        let sockets = try SocketHome()
        defer { sockets.remove() }
        let large = bytes >= 1 << 20
        let puts = large ? context.count(100, quick: 32) : context.count(3000, quick: 1000)
        let warmups = large ? connections * 3 : S3Variants.warmupCount(puts)
        let workload = Workload(blobBytes: bytes, count: 1)
        let blobdPrefix = S3Variants.freshPrefix("b")
        let directPrefix = S3Variants.freshPrefix("d")
        /// The identifiers one run writes: warm-up first, then timed (as DaemonVariants.plan names them).
        @Sendable func identifiers(_ token: String) -> (warmup: [String], timed: [String]) {
            ((0..<warmups).map { "\(token)-w\($0)" }, (0..<puts).map { "\(token)-\($0)" })
        }
        /// Large blobs are deleted after each run, so the memstore OSD does not fill the machine's memory.
        @Sendable func cleanup(_ prefix: String) -> (@Sendable (String) async throws -> Void)? {
            guard large else { return nil }
            return { token in
                let (warmup, timed) = identifiers(token)
                try await S3Variants.delete(warmup + timed, prefix: prefix, gateway: gateway, workload: workload)
            }
        }
        let started = Locked(0)
        let store = "blobd×\(connections)"
        // The same blobd as a fleet member (`--events-listen 0`): subscribed to the bucket's
        // notifications, so the gateway queues and pushes an event for each of blobd's PUTs, which
        // the direct PUTs (under other prefixes) never pay for. Shows what a fleet's change events
        // cost; reported beside the target, not used for it.
        let fleet = "blobd fleet events×\(connections)"
        let fleetPrefix = S3Variants.freshPrefix("q")
        let direct = "direct×\(connections)"
        // The same PUTs made create-only (`If-None-Match: *`), as blobd makes each new blob's: shows
        // what the condition itself costs the gateway. Reported beside the target, not used for it.
        let createOnly = "direct create-only×\(connections)"
        let createOnlyPrefix = S3Variants.freshPrefix("o")
        let sinks = [
            (variant: store, sink: S3CPUSink()), (variant: direct, sink: S3CPUSink()), (variant: createOnly, sink: S3CPUSink()),
            (variant: fleet, sink: S3CPUSink()),
        ]
        /// blobd on `prefix`, a new one for each run, started with `arguments`.
        @Sendable func blobd(_ prefix: String, _ arguments: [String]) -> S3Variants.Target {
            .blobd(
                .perRun { directory in
                    let index = started.withLock { value in
                        value += 1
                        return value
                    }
                    return try S3Blobd(
                        bucket: gateway.bucket, prefix: prefix, folder: directory + "/blobd", socketPath: sockets.socket("p\(index)"),
                        arguments: arguments)
                })
        }
        let variants = [
            S3Variants.http(
                name: store, kind: .store, connections: connections, operations: puts, target: blobd(blobdPrefix, []), gateway: gateway,
                sink: sinks[0].sink, latency: LatencySink(),
                plans: { token in
                    let (warmup, timed) = identifiers(token)
                    return (S3Variants.blobdPuts(warmup, workload: workload), S3Variants.blobdPuts(timed, workload: workload))
                }, cleanup: cleanup(blobdPrefix)),
            S3Variants.http(
                name: fleet, kind: .store, connections: connections, operations: puts, target: blobd(fleetPrefix, ["--events-listen", "0"]),
                gateway: gateway, sink: sinks[3].sink, latency: LatencySink(),
                plans: { token in
                    let (warmup, timed) = identifiers(token)
                    return (S3Variants.blobdPuts(warmup, workload: workload), S3Variants.blobdPuts(timed, workload: workload))
                }, cleanup: cleanup(fleetPrefix)),
            S3Variants.http(
                name: direct, kind: .peer, connections: connections, operations: puts, target: .gateway, gateway: gateway,
                sink: sinks[1].sink, latency: LatencySink(),
                plans: { token in
                    let (warmup, timed) = identifiers(token)
                    return (
                        S3Variants.gatewayPuts(warmup, prefix: directPrefix, gateway: gateway, workload: workload),
                        S3Variants.gatewayPuts(timed, prefix: directPrefix, gateway: gateway, workload: workload)
                    )
                }, cleanup: cleanup(directPrefix)),
            S3Variants.http(
                name: createOnly, kind: .peer, connections: connections, operations: puts, target: .gateway, gateway: gateway,
                sink: sinks[2].sink, latency: LatencySink(),
                plans: { token in
                    let (warmup, timed) = identifiers(token)
                    return (
                        S3Variants.gatewayPuts(warmup, prefix: createOnlyPrefix, gateway: gateway, workload: workload, createOnly: true),
                        S3Variants.gatewayPuts(timed, prefix: createOnlyPrefix, gateway: gateway, workload: workload, createOnly: true)
                    )
                }, cleanup: cleanup(createOnlyPrefix)),
        ]
        var result = try await context.measure(
            scenario: name, label: "\(BlobSize.label(bytes)) ×\(connections)", blobBytes: bytes, variants: variants,
            comparisons: [
                Comparison(store: store, raw: nil, article: nil, peer: direct), Comparison(store: store, raw: nil, article: nil, peer: createOnly),
                Comparison(store: fleet, raw: nil, article: nil, peer: direct),
            ])
        result.figures += S3Variants.figures(
            result, sinks: sinks, targets: [(store, direct, 0.9), (store, createOnly, nil), (fleet, direct, nil)])
        return [result]
    }
}
