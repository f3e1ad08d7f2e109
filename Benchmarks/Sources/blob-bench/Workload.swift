import Foundation

/// The bytes and names a case works with, made before any clock starts and shared by all variants,
/// so every variant writes the same content under the same identifiers.
final class Workload: @unchecked Sendable {
    // @unchecked: `bytes` is written once in `init` and only read afterwards, from any thread.

    /// The content as `Data`, for the store and the article's store.
    let data: Data
    /// The same content in one stable buffer, for the raw loops.
    let bytes: UnsafeMutableRawBufferPointer
    /// One identifier per blob (UUID strings, like the article's default identifiers).
    let identifiers: [String]

    init(blobBytes: Int, count: Int) {
        bytes = .allocate(byteCount: max(blobBytes, 1), alignment: 4096)
        // Not zeros: a pseudo-random pattern, so nothing downstream can shortcut on empty content.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in 0..<bytes.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state)
        }
        data = Data(UnsafeRawBufferPointer(rebasing: bytes[..<blobBytes]))
        identifiers = (0..<count).map { _ in UUID().uuidString }
    }

    deinit { bytes.deallocate() }

    /// The content for writing (exactly the blob's size).
    var content: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[..<data.count]) }

    /// `folder/identifier` for every blob.
    func paths(in folder: String, prefix: String = "") -> [String] {
        identifiers.map { folder + "/" + prefix + $0 }
    }
}

/// Blob sizes used across scenarios.
enum BlobSize {
    static let small = 4 * 1024
    static let medium = 256 * 1024
    static let large = 16 * 1024 * 1024

    /// `4 KiB`, `256 KiB`, `16 MiB`.
    static func label(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) B"
    }
}
