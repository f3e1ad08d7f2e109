// swift-tools-version: 6.0
import PackageDescription

// s3-transport-cost: what HTTPS costs a user of `S3BlobStore` against plain HTTP (docs/SCALE-OUT.md,
// "HTTPS"). A package of its own, beside `Benchmarks/`, so that blob-bench keeps building against
// commits of the product from before the `S3BlobStore` product existed (scripts/compare-commits).
// It uses the product as any user would, through the `S3BlobStore` library's public API.
let package = Package(
    name: "S3TransportCost",
    dependencies: [
        // `name:` fixes the package's identity, which otherwise comes from the folder the clone is in.
        .package(name: "BlobStore", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "s3-transport-cost",
            dependencies: [
                .product(name: "S3BlobStore", package: "BlobStore"),
                .product(name: "BlobStore", package: "BlobStore"),
            ]
        )
    ]
)
