// s3-transport-cost: what HTTPS costs a user of `S3BlobStore` against plain HTTP, through one
// gateway, in one run (docs/SCALE-OUT.md, "HTTPS"). One store per endpoint, its calls one after
// another (so each store keeps one connection to its endpoint); rounds alternate between the
// endpoints so that drift in the gateway hits each alike; medians.
//
//   AWS_ENDPOINT_URL              the gateway, plain HTTP (direct)
//   BLOB_S3_HTTP_PROXY_ENDPOINT   the same gateway through nginx without TLS (the proxy's own cost)
//   BLOB_S3_HTTPS_ENDPOINT        the same gateway through nginx with TLS (FoundationNetworking)
//   plus the credentials and BLOB_S3_BUCKET, as .ci/ceph and .ci/s3-https write them.
//   ROUNDS (5), SMALL_PER_ROUND (100), LARGE_PER_ROUND (8)
//
// swift build -c release --package-path Benchmarks/S3TransportCost
// Benchmarks/S3TransportCost/.build/release/s3-transport-cost
import BlobStore
import Foundation
import S3BlobStore

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("s3-transport-cost: \(message)\n".utf8))
    exit(1)
}

let environment = ProcessInfo.processInfo.environment
guard let bucket = environment["BLOB_S3_BUCKET"] else { fail("BLOB_S3_BUCKET is not set (source the .ci/ceph env)") }
let endpoints: [(name: String, url: String?)] = [
    ("HTTP direct", environment["AWS_ENDPOINT_URL"]),
    ("HTTP via nginx", environment["BLOB_S3_HTTP_PROXY_ENDPOINT"]),
    ("HTTPS via nginx", environment["BLOB_S3_HTTPS_ENDPOINT"]),
]
let rounds = Int(environment["ROUNDS"] ?? "") ?? 5
let smallPerRound = Int(environment["SMALL_PER_ROUND"] ?? "") ?? 100
let largePerRound = Int(environment["LARGE_PER_ROUND"] ?? "") ?? 8

/// One endpoint's store: all under one key prefix of this run, so nothing else in the bucket is touched.
struct Target {
    let name: String
    let store: S3BlobStore
}

let prefix = "transport-cost-\(getpid())"
var targets: [Target] = []
for (name, url) in endpoints {
    guard let url else { fail("no endpoint for \(name) (source the .ci/ceph and .ci/s3-https env files)") }
    var variables = environment
    variables["AWS_ENDPOINT_URL"] = url
    variables["AWS_ENDPOINT_URL_S3"] = nil
    do {
        let configuration = try S3Configuration.resolve(environment: AWSEnvironment(variables: variables, readFile: { _ in nil }))
        targets.append(Target(name: name, store: try S3BlobStore(name: "bench", bucket: bucket, keyPrefix: prefix, configuration: configuration)))
    } catch {
        fail("\(name) at \(url): \(error)")
    }
}

let smallBody = Data(repeating: 0x61, count: 4096)
let largeBody = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })

enum Operation: CaseIterable {
    case put4KiB, get4KiB, put4MiB, get4MiB
    var label: String {
        switch self {
        case .put4KiB: "PUT 4 KiB"
        case .get4KiB: "GET 4 KiB"
        case .put4MiB: "PUT 4 MiB"
        case .get4MiB: "GET 4 MiB"
        }
    }
    var body: Data { self == .put4MiB || self == .get4MiB ? largeBody : smallBody }
    var identifier: String { self == .put4MiB || self == .get4MiB ? "large" : "small" }
}

func perform(_ operation: Operation, on store: S3BlobStore) async throws {
    switch operation {
    case .put4KiB, .put4MiB:
        _ = try await store.put(operation.body, identifier: operation.identifier, options: PutOptions())
    case .get4KiB, .get4MiB:
        let content = try await store.get(operation.identifier)
        guard content.count == operation.body.count else { fail("\(operation.label): read \(content.count) bytes") }
    }
}

var samples: [String: [Operation: [Double]]] = [:]
do {
    // Warm up: connections, TLS sessions, and the blobs the GETs read.
    for target in targets {
        for operation in Operation.allCases { for _ in 0..<3 { try await perform(operation, on: target.store) } }
    }
    for _ in 0..<rounds {
        for operation in Operation.allCases {
            let count = operation.body.count > 4096 ? largePerRound : smallPerRound
            for target in targets {
                for _ in 0..<count {
                    let start = ContinuousClock.now
                    try await perform(operation, on: target.store)
                    let elapsed = start.duration(to: .now)
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    samples[target.name, default: [:]][operation, default: []].append(seconds)
                }
            }
        }
    }
    for target in targets { try await target.store.removeAll() }
} catch {
    fail("\(error)")
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

print("S3 transport cost: median per store call, one call at a time, \(rounds) rounds alternating endpoints")
print("operation  | " + targets.map { $0.name.padding(toLength: 24, withPad: " ", startingAt: 0) }.joined(separator: " | ") + " | HTTPS / HTTP direct")
for operation in Operation.allCases {
    var cells: [String] = []
    var medians: [Double] = []
    for target in targets {
        let value = median(samples[target.name]?[operation] ?? [])
        medians.append(value)
        let rate = operation.body.count > 4096
            ? String(format: "%.0f MB/s", Double(operation.body.count) / value / 1e6)
            : String(format: "%.0f req/s", 1 / value)
        cells.append(String(format: "%7.2f ms (%@)", value * 1000, rate).padding(toLength: 24, withPad: " ", startingAt: 0))
    }
    print(operation.label.padding(toLength: 10, withPad: " ", startingAt: 0) + " | " + cells.joined(separator: " | ")
        + String(format: " | %.2f×", medians[2] / medians[0]))
}
