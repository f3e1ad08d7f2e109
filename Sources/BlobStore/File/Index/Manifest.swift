internal import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The manifest file: the bucket map as text (``BucketMap/manifestText()``), rewritten whole,
/// atomically and durably, whenever the map changes.
enum Manifest {
    /// How long a read-only engine waits for a split in progress (a `splitting` line) to end before it
    /// uses the marked map as it is (the writer may have died mid-split: the files then stay where
    /// they are until the next writer finishes the split).
    static let splitSettleTime = Duration.seconds(2)

    /// Writes `map` as the store's manifest (temp file in `tmp/`, fsync, rename, fsync of the store folder).
    static func write(_ map: BucketMap, paths: StorePaths) throws {
        try DurableWrite.replace(paths.manifest, with: Array(map.manifestText().utf8), temp: paths.temp + "/manifest.tmp")
    }

    /// The manifest's text and map; the initial map (and empty text) when there is no manifest yet.
    static func read(at path: String) throws -> (text: String, map: BucketMap) {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, [.readOnly]) } catch {
            if error == .noSuchFileOrDirectory { return ("", .initial) }
            throw BlobStoreError.io(operation: "open", path: path, errno: error)
        }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let offset = Int64(bytes.count)
            let count = try io("read", path) { try chunk.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: offset, into: $0) } }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        switch BucketMap.parse(text) {
        case .success(let map): return (text, map)
        case .failure(let error): throw BlobStoreError.corrupt(path: path, reason: error.reason)
        }
    }

    /// ``read(at:)``, read again after pauses of 1 ms doubling to 50 ms while it marks a split in
    /// progress, for up to ``splitSettleTime``. Blocks: call on the store queue or another dispatch thread.
    static func settled(at path: String) throws -> (text: String, map: BucketMap) {
        var manifest = try read(at: path)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: splitSettleTime)
        var pause = 1_000  // microseconds
        while manifest.map.pendingSplit != nil, clock.now < deadline {
            usleep(UInt32(pause))
            pause = min(pause * 2, 50_000)
            manifest = try read(at: path)
        }
        return manifest
    }
}
