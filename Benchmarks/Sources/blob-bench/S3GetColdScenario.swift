/// `s3-get-cold`: GET of blobs that are not in blobd's read cache, through blobd on S3, against GET
/// of the same objects from the gateway directly, with the same connections (issue 19: blobd ≥ 0.9×
/// direct). Cold means: blobd is started with an empty cache for each run, and each run reads every
/// blob once (the warm-up reads other blobs), so every timed GET goes to the gateway.
struct S3GetColdScenario: Scenario {
    var name: String { "s3-get-cold" }
    var summary: String {
        "blobd on S3 GET, empty read cache, 4 KiB ×16 and 4 MiB ×4 connections vs the same GETs from the Ceph gateway directly (brings up Ceph)"
    }

    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        guard let gateway = try await S3Variants.gateway(for: name) else { return [] }
        defer { gateway.stop() }
        let sockets = try SocketHome()
        defer { sockets.remove() }
        let cases = [
            (bytes: BlobSize.small, connections: 16, gets: context.count(3000, quick: 1000)),
            (bytes: 4 << 20, connections: 4, gets: context.count(60, quick: 24)),
        ]
        let started = Locked(0)
        /// A socket no earlier blobd of this scenario used.
        @Sendable func socket() -> String {
            sockets.socket("c" + String(started.withLock { value in
                value += 1
                return value
            }))
        }
        var results: [CaseResult] = []
        for (bytes, connections, gets) in cases {
            let warmups = bytes >= 1 << 20 ? connections * 2 : S3Variants.warmupCount(gets)
            let workload = Workload(blobBytes: bytes, count: warmups + gets)
            let warmupIdentifiers = Array(workload.identifiers[..<warmups])
            let timedIdentifiers = Array(workload.identifiers[warmups...])
            let prefix = S3Variants.freshPrefix("c")
            // Stored through blobd (untimed), so the objects are what blobd writes; both variants read them.
            let loader = try S3Blobd(bucket: gateway.bucket, prefix: prefix, folder: try context.spreadFolder("loader"), socketPath: socket())
            do {
                defer { loader.stop() }
                try await DaemonVariants.populate(loader, workload)
            }
            let store = "blobd cold×\(connections)"
            let direct = "direct×\(connections)"
            let sinks = [(variant: store, sink: S3CPUSink()), (variant: direct, sink: S3CPUSink())]
            let variants = [
                S3Variants.http(
                    name: store, kind: .store, connections: connections, operations: gets,
                    target: .blobd(
                        .perRun { directory in
                            try S3Blobd(bucket: gateway.bucket, prefix: prefix, folder: directory + "/blobd", socketPath: socket())
                        }), gateway: gateway, sink: sinks[0].sink, latency: LatencySink(),
                    plans: { _ in
                        (S3Variants.blobdGets(warmupIdentifiers, workload: workload), S3Variants.blobdGets(timedIdentifiers, workload: workload))
                    }),
                S3Variants.http(
                    name: direct, kind: .peer, connections: connections, operations: gets, target: .gateway, gateway: gateway,
                    sink: sinks[1].sink, latency: LatencySink(),
                    plans: { _ in
                        (
                            S3Variants.gatewayGets(warmupIdentifiers, prefix: prefix, gateway: gateway, workload: workload),
                            S3Variants.gatewayGets(timedIdentifiers, prefix: prefix, gateway: gateway, workload: workload)
                        )
                    }),
            ]
            var result = try await context.measure(
                scenario: name, label: "\(BlobSize.label(bytes)) ×\(connections)", blobBytes: bytes, variants: variants,
                comparisons: [Comparison(store: store, raw: nil, article: nil, peer: direct)])
            result.figures += S3Variants.figures(result, sinks: sinks, targets: [(store, direct, 0.9)])
            results.append(result)
            if bytes >= 1 << 20 {
                try await S3Variants.delete(workload.identifiers, prefix: prefix, gateway: gateway, workload: workload)
            }
        }
        return results
    }
}
