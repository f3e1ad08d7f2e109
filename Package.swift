// swift-tools-version: 6.0
import PackageDescription

// Module graph (arrows point one way):
//
//   CBlobShim (C: syscalls Glibc's Swift module lacks)
//        ↓
//   BlobSystem (typed POSIX wrappers: FileDescriptor, Errno, directories, locks)
//        ↓
//   BlobStore (the store: Model/ types and the BlobStoring protocol, File/ the file store's engine in
//              parts (Engine, Index, Write, Read, Listing, Verify, Policy: cache mode, Format: the
//              blob file), InMemory/, Backend/ what blobd serves any store through (ServedBackend),
//              Article/ the article's API, Image/, Checksum/)
//
//   HTTP1 (HTTP/1.1 codec: bytes in, messages out; no I/O, no dependencies)
//
//   BlobProtocol (BlobStore + HTTP1: blobd's wire vocabulary, defined once: routes, header names,
//                 error codes, metadata/list/event JSON, HTTP dates, the default socket path)
//        ↓
//   BlobServer (BlobProtocol + BlobStore + BlobSystem + HTTP1 + S3BlobStore: the daemon's event loops, which only
//               parse, serialize and move bytes; routing; store calls on its blocking-work pools) → blobd
//
//   BlobClient (BlobProtocol + BlobStore + BlobSystem + HTTP1: the daemon's Swift client, a BlobStoring)
//   BlobCLI (BlobStore + BlobClient + BlobProtocol + S3BlobStore; commands, help, output, backends) → blob
//
//   S3BlobStore (BlobProtocol + BlobStore + BlobSystem + HTTP1: the S3 backend: S3BlobStore, the store on a bucket
//                (Store/), SHA-256, HMAC, Signature V4, AWS configuration, S3 requests and XML
//                answers, HTTP/1.1 over TCP; docs/SCALE-OUT.md)
//
// The benchmarks are a package of their own (Benchmarks/, docs/BENCHMARKS.md) that uses this one
// through its products only, as any user would.
let package = Package(
    name: "BlobStore",
    products: [
        .library(name: "BlobStore", targets: ["BlobStore"]),
        .library(name: "BlobClient", targets: ["BlobClient"]),
        .library(name: "S3BlobStore", targets: ["S3BlobStore"]),
        .executable(name: "blobd", targets: ["blobd"]),
        .executable(name: "blob", targets: ["blob"]),
    ],
    targets: [
        .target(name: "CBlobShim"),
        .target(name: "BlobSystem", dependencies: ["CBlobShim"]),
        .target(name: "BlobStore", dependencies: ["BlobSystem"]),
        .target(name: "HTTP1"),
        .target(name: "BlobProtocol", dependencies: ["BlobStore", "HTTP1"]),
        .target(name: "BlobServer", dependencies: ["BlobProtocol", "BlobStore", "BlobSystem", "HTTP1", "S3BlobStore"]),
        .executableTarget(name: "blobd", dependencies: ["BlobServer"]),
        .target(name: "BlobClient", dependencies: ["BlobProtocol", "BlobStore", "BlobSystem", "HTTP1"]),
        .target(name: "BlobCLI", dependencies: ["BlobStore", "BlobSystem", "BlobClient", "BlobProtocol", "S3BlobStore"]),
        .executableTarget(name: "blob", dependencies: ["BlobCLI"]),
        // The S3 backend (docs/SCALE-OUT.md): Signing/ (SHA-256, HMAC, Signature V4), Configuration/ (AWS
        // environment and profile files), Requests/ and XML/ (the S3 vocabulary), Transport/ (HTTP/1.1 over TCP),
        // HTTPS/ (TLS through FoundationNetworking), Multipart/ (multipart uploads, stale-upload cleanup).
        .target(name: "S3BlobStore", dependencies: ["BlobProtocol", "BlobStore", "BlobSystem", "HTTP1"]),

        // What the test targets share (not a product): temp folders, the built tools as processes, the
        // daemon harness, crash and damage helpers, the article call model, and the store kinds the
        // behaviour suite runs against.
        .target(name: "BlobTestSupport", dependencies: ["BlobStore", "BlobSystem", "BlobClient", "S3BlobStore"], path: "Tests/BlobTestSupport"),
        // The behaviour suite, written once, run against every backend (StoreKind).
        .testTarget(name: "BlobBehaviourTests", dependencies: ["BlobStore", "BlobClient", "BlobTestSupport"]),
        .testTarget(name: "BlobSystemTests", dependencies: ["BlobSystem"]),
        .testTarget(
            name: "BlobStoreTests",
            dependencies: ["BlobStore", "BlobSystem", "BlobTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1"]),
        .testTarget(name: "BlobProtocolTests", dependencies: ["BlobProtocol", "BlobClient", "BlobStore", "BlobSystem", "HTTP1"]),
        .testTarget(name: "BlobClientTests", dependencies: ["BlobClient", "BlobProtocol", "BlobStore", "BlobSystem", "BlobTestSupport"]),
        .testTarget(name: "BlobCLITests", dependencies: ["BlobCLI", "BlobStore", "BlobTestSupport"]),
        .testTarget(
            name: "S3BlobStoreTests", dependencies: ["S3BlobStore", "BlobStore", "BlobSystem", "HTTP1", "BlobTestSupport"],
            resources: [.copy("SigningFixtures")]
        ),
        .testTarget(name: "BlobServerTests", dependencies: ["BlobServer", "BlobStore", "BlobSystem", "HTTP1", "BlobTestSupport", "S3BlobStore"]),

        // Fuzzing (docs/RELIABILITY.md): the checks, a libFuzzer/replay driver, and the corpus replayed as tests.
        .target(name: "BlobFuzzTargets", dependencies: ["BlobStore", "HTTP1"]),
        .executableTarget(name: "blob-fuzz", dependencies: ["BlobFuzzTargets"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["BlobFuzzTargets"], resources: [.copy("Corpus")]),

        .executableTarget(name: "article-example", dependencies: ["BlobStore"], path: "Examples/ArticleExample"),
        .executableTarget(name: "records-example", dependencies: ["BlobStore"], path: "Examples/RecordsExample"),
        .executableTarget(name: "async-example", dependencies: ["BlobStore"], path: "Examples/AsyncExample"),
        .executableTarget(name: "client-example", dependencies: ["BlobStore", "BlobClient"], path: "Examples/ClientExample"),
        .executableTarget(name: "quick-start", dependencies: ["BlobStore", "BlobClient"], path: "Examples/QuickStart"),
        .executableTarget(name: "article-quick-start", dependencies: ["BlobStore", "BlobClient"], path: "Examples/ArticleQuickStart"),
        .executableTarget(name: "client-quick-start", dependencies: ["BlobStore", "BlobClient"], path: "Examples/ClientQuickStart"),
    ]
)
