// swift-tools-version: 6.0
import PackageDescription

// blob-bench: the product's benchmarks (docs/BENCHMARKS.md), kept out of the product.
//
// It uses the product as any user would, through its products only: the `BlobStore` library for the
// embedded scenarios and the `blobd` executable for the daemon scenarios (built into the same build
// folder, where blob-bench finds it next to itself). The socket, epoll and file helpers it needs are
// its own small ones (`Sources/blob-bench/System/`), so the benchmarks build against any commit of the
// product that has these two products (Benchmarks/scripts/compare-commits relies on that).
let package = Package(
    name: "Benchmarks",
    dependencies: [
        // `name:` fixes the package's identity, which otherwise comes from the folder the clone is in.
        .package(name: "BlobStore", path: "..")
    ],
    targets: [
        // epoll and syncfs, which Swift's Glibc module does not export.
        .target(name: "CBenchShim"),
        .executableTarget(
            name: "blob-bench",
            dependencies: [
                "CBenchShim",
                .product(name: "BlobStore", package: "BlobStore"),
                // Not linked: listing it makes SwiftPM build blobd next to blob-bench, which runs it.
                .product(name: "blobd", package: "BlobStore"),
            ]
        )
    ]
)
