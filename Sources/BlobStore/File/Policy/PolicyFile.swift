internal import BlobSystem
import Foundation

/// The store's cache policy on disk (`policy` in the store folder, STORAGE.md "Cache mode"): a few
/// lines of text, rewritten whole, atomically and durably, like the manifest.
///
/// ```
/// blobstore-policy 1
/// maximum-bytes 2147483648
/// maximum-count 100000
/// default-ttl-ns 604800000000000
/// ```
/// A line is left out when its field is `nil`. No file means ``StorePolicy/unlimited`` and a store
/// that has never been in cache mode.
enum PolicyFile {
    static let fileName = "policy"
    private static let firstLine = "blobstore-policy 1"

    /// The text for `policy`.
    static func text(_ policy: StorePolicy) -> String {
        var lines = [firstLine]
        if let bytes = policy.maximumBytes { lines.append("maximum-bytes \(bytes)") }
        if let count = policy.maximumCount { lines.append("maximum-count \(count)") }
        if let ttl = policy.defaultTimeToLive { lines.append("default-ttl-ns \(ttl.clampedNanoseconds)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The policy in `text`, or why it is not one.
    static func parse(_ text: String) -> Result<StorePolicy, PolicyParseError> {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard lines.first == firstLine else { return .failure(PolicyParseError(reason: "first line is not '\(firstLine)'")) }
        lines.removeFirst()
        var policy = StorePolicy()
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Int64(parts[1]), value >= 0 else {
                return .failure(PolicyParseError(reason: "line '\(line)' is not a field and a non-negative number"))
            }
            switch parts[0] {
            case "maximum-bytes": policy.maximumBytes = value
            case "maximum-count": policy.maximumCount = Int(value)
            case "default-ttl-ns": policy.defaultTimeToLive = .nanoseconds(value)
            default: return .failure(PolicyParseError(reason: "unknown field '\(parts[0])'"))
            }
        }
        return .success(policy)
    }

    /// The stored policy, or `nil` when the store has no policy file. A file that does not parse
    /// throws `corrupt` naming it; one that cannot be read throws `io`.
    static func read(_ paths: StorePaths) throws -> StorePolicy? {
        let path = paths.policy
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, [.readOnly]) } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw BlobStoreError.io(operation: "open", path: path, errno: error)
        }
        defer { try? fd.close() }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = try io("read", path) { try bytes.withUnsafeMutableBytes { try fd.readFully(fromAbsoluteOffset: 0, into: $0) } }
        switch parse(String(decoding: bytes[..<count], as: UTF8.self)) {
        case .success(let policy): return policy
        case .failure(let error): throw BlobStoreError.corrupt(path: path, reason: error.reason)
        }
    }

    /// Writes `policy` (temp file in `tmp/`, fsync, rename, fsync of the store folder).
    static func write(_ policy: StorePolicy, paths: StorePaths) throws {
        try DurableWrite.replace(paths.policy, with: Array(text(policy).utf8), temp: paths.temp + "/policy.tmp")
    }
}

/// Why a policy file does not parse.
struct PolicyParseError: Error, Equatable {
    var reason: String
}

extension StorePaths {
    /// The store's cache policy (``PolicyFile``).
    var policy: String { store + "/" + PolicyFile.fileName }
}
