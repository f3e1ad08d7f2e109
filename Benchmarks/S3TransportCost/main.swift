// s3-transport-cost: what HTTPS costs the S3 client against plain HTTP, through one gateway, in one
// run (docs/SCALE-OUT.md, "HTTPS"). Sequential requests on one keep-alive connection per endpoint;
// rounds alternate between the endpoints so that drift in the gateway hits each alike; medians.
//
//   AWS_ENDPOINT_URL              the gateway, plain HTTP (direct)
//   BLOB_S3_HTTP_PROXY_ENDPOINT   the same gateway through nginx without TLS (the proxy's own cost)
//   BLOB_S3_HTTPS_ENDPOINT        the same gateway through nginx with TLS (FoundationNetworking)
//   plus the credentials and BLOB_S3_BUCKET, as .ci/ceph and .ci/s3-https write them.
//
// Build and run in release mode: swift build -c release --product s3-transport-cost
import BlobSystem
import Foundation
import S3BlobStore

#if canImport(Glibc)
import Glibc
#endif

struct Target {
    let name: String
    let client: S3Client
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("s3-transport-cost: \(message)\n".utf8))
    exit(1)
}

let environment = ProcessInfo.processInfo.environment
guard let bucket = environment["BLOB_S3_BUCKET"] else { fail("BLOB_S3_BUCKET is not set (source the .ci/ceph env)") }
let endpoints: [(String, String?)] = [
    ("HTTP direct", environment["AWS_ENDPOINT_URL"]),
    ("HTTP via nginx", environment["BLOB_S3_HTTP_PROXY_ENDPOINT"]),
    ("HTTPS via nginx", environment["BLOB_S3_HTTPS_ENDPOINT"]),
]
let rounds = Int(environment["ROUNDS"] ?? "") ?? 5
let smallPerRound = Int(environment["SMALL_PER_ROUND"] ?? "") ?? 100
let largePerRound = Int(environment["LARGE_PER_ROUND"] ?? "") ?? 8

var targets: [Target] = []
for (name, url) in endpoints {
    guard let url else { fail("no endpoint for \(name) (source the .ci/ceph and .ci/s3-https env files)") }
    var variables = environment
    variables["AWS_ENDPOINT_URL"] = url
    variables["AWS_ENDPOINT_URL_S3"] = nil
    do {
        let configuration = try S3Configuration.resolve(environment: AWSEnvironment(variables: variables, readFile: { _ in nil }))
        targets.append(Target(name: name, client: try S3Client(configuration: configuration, bucket: bucket)))
    } catch {
        fail("\(name) at \(url): \(error)")
    }
}

// The large body lives in a file and goes out as a file region, as the store sends it.
let smallBody = [UInt8](repeating: 0x61, count: 4096)
let largeLength = 4 << 20
let largePath = NSTemporaryDirectory() + "s3-transport-cost-\(getpid())"
_ = FileManager.default.createFile(atPath: largePath, contents: Data((0..<largeLength).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
let largeFile = try FileDescriptor.open(largePath, .readOnly)
defer {
    try? largeFile.close()
    try? FileManager.default.removeItem(atPath: largePath)
}
let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)

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
    var bytes: Int { self == .put4MiB || self == .get4MiB ? largeLength : 4096 }
    var key: String { self == .put4MiB || self == .get4MiB ? "transport-cost/large" : "transport-cost/small" }
}

@MainActor func perform(_ operation: Operation, on client: S3Client) throws {
    let key = operation.key
    switch operation {
    case .put4KiB:
        _ = try client.send(try client.bucket.putObject(key: key, payload: .unsigned), body: .bytes(smallBody), context: client.bucket.context("PutObject", key: key))
    case .put4MiB:
        _ = try client.send(
            try client.bucket.putObject(key: key, payload: .unsigned), body: .fileRegion(largeFile, offset: 0, length: Int64(largeLength)),
            context: client.bucket.context("PutObject", key: key))
    case .get4KiB, .get4MiB:
        let response = try client.start(try client.bucket.getObject(key: key), context: client.bucket.context("GetObject", key: key))
        guard response.status.code == 200 else { throw client.fail(response, context: client.bucket.context("GetObject", key: key)) }
        var total = 0
        while let count = try response.read(into: readBuffer) { total += count }
        guard total == operation.bytes else { fail("\(operation.label): read \(total) bytes") }
    }
}

var samples: [String: [Operation: [Double]]] = [:]
do {
    // Warm up: connections, TLS sessions, and the objects the GETs read.
    for target in targets {
        for operation in Operation.allCases { for _ in 0..<3 { try perform(operation, on: target.client) } }
    }
    for _ in 0..<rounds {
        for operation in Operation.allCases {
            let count = operation.bytes > 4096 ? largePerRound : smallPerRound
            for target in targets {
                for _ in 0..<count {
                    let start = ContinuousClock.now
                    try perform(operation, on: target.client)
                    let elapsed = start.duration(to: .now)
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    samples[target.name, default: [:]][operation, default: []].append(seconds)
                }
            }
        }
    }
} catch {
    fail("\(error)")
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

print("S3 transport cost: median per request, one connection, \(rounds) rounds alternating endpoints")
print("operation  | " + targets.map { $0.name.padding(toLength: 22, withPad: " ", startingAt: 0) }.joined(separator: " | ") + " | HTTPS / HTTP direct")
for operation in Operation.allCases {
    var cells: [String] = []
    var medians: [Double] = []
    for target in targets {
        let value = median(samples[target.name]?[operation] ?? [])
        medians.append(value)
        let rate = operation.bytes > 4096
            ? String(format: "%.0f MB/s", Double(operation.bytes) / value / 1e6)
            : String(format: "%.0f req/s", 1 / value)
        cells.append(String(format: "%7.2f ms (%@)", value * 1000, rate).padding(toLength: 22, withPad: " ", startingAt: 0))
    }
    print(operation.label.padding(toLength: 10, withPad: " ", startingAt: 0) + " | " + cells.joined(separator: " | ")
        + String(format: " | %.2f×", medians[2] / medians[0]))
}
