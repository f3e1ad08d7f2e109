internal import BlobSystem
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reading a store that another process holds and may be changing (a read-only engine, see
/// ``StoreCore/init(readingOnly:name:)``).
///
/// Every change to the bucket tree is one `rename`, so a read-only engine never sees half a blob. What
/// can mislead it is a split by the writing process: the writer records the split in the manifest
/// (`splitting NEW FROM`), moves the upper part of bucket FROM to NEW one rename at a time, then
/// rewrites the manifest without the mark. A reader holding an older map looks in FROM for a blob
/// that moved to NEW, and a listing or scan may walk FROM before and NEW after a move. So:
/// - a lookup that misses reads the manifest again; if it is unchanged since the map the lookup used,
///   no split began since, and the miss is real; otherwise it looks again under the new map (in
///   FROM first, then NEW, while a split is marked: a blob moving between the two looks is then found
///   in NEW), up to ``missRetries`` times;
/// - each step of a scan (one bucket of a listing or of the totals; all of `verify`) reads the
///   manifest before and after, and runs again when it changed in between, up to ``scanRetries`` times.
extension StoreCore {
    /// How many newer manifests a missed lookup of a read-only engine tries before "not found".
    static let missRetries = 20
    /// How many times a scan by a read-only engine runs while splits keep overlapping it.
    static let scanRetries = 20
    /// How long a read-only engine waits for a split in progress (a `splitting` line) to end
    /// before it uses the marked map as it is (the writer may have died mid-split: the files then
    /// stay where they are until the next writer finishes the split).
    static let splitSettleTime = Duration.seconds(2)

    /// The manifest's text and map; the initial map (and empty text) when there is no manifest yet.
    static func readManifest(at path: String) throws -> (text: String, map: BucketMap) {
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

    /// ``readManifest(at:)``, read again after pauses of 1 ms doubling to 50 ms while it marks a split
    /// in progress, for up to ``splitSettleTime``. Blocks: call on `queue` or another dispatch thread.
    static func settledManifest(at path: String) throws -> (text: String, map: BucketMap) {
        var manifest = try readManifest(at: path)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: splitSettleTime)
        var pause = 1_000  // microseconds
        while manifest.map.pendingSplit != nil, clock.now < deadline {
            usleep(UInt32(pause))
            pause = min(pause * 2, 50_000)
            manifest = try readManifest(at: path)
        }
        return manifest
    }

    /// ``openCurrent(_:readLength:)``, except that a read-only engine that misses follows a split the
    /// writing process made meanwhile (see the extension's documentation). Call on `queue`.
    func openLatest(_ identifier: String, readLength: Int = StoreCore.initialReadLength) throws -> OpenedBlob {
        do {
            return try openCurrent(identifier, readLength: readLength)
        } catch BlobStoreError.notFound where readOnly {}
        var seen = manifestSeen.withLock { $0 }
        for _ in 0..<StoreCore.missRetries {
            let (text, map) = try StoreCore.settledManifest(at: manifestPath)
            if text == seen { break }
            adoptLater(text, map)
            let index = map.index(for: identifier.utf8)
            var buckets = [map.buckets[index].number]
            if let split = map.pendingSplit, split.newBucket == buckets[0] { buckets.insert(split.fromBucket, at: 0) }
            for bucket in buckets {
                if let blob = try openBlob(at: path(of: identifier, inBucket: bucket), identifier: identifier, readLength: readLength) {
                    return blob
                }
            }
            seen = text
        }
        throw BlobStoreError.notFound(store: name, identifier: identifier)
    }

    /// Makes a newer manifest's map this engine's map, in a barrier (a read must not see its map
    /// change under it), unless a newer one was adopted already.
    private func adoptLater(_ text: String, _ map: BucketMap) {
        queue.async(flags: .barrier) {
            let current = self.confined.map
            let newer = map.nextNumber > current.nextNumber || (map.nextNumber == current.nextNumber && current.pendingSplit != nil && map.pendingSplit == nil)
            guard newer else { return }
            self.adopt(text, map)
        }
    }

    /// Replaces the map. Inside a barrier.
    private func adopt(_ text: String, _ map: BucketMap) {
        confined.map = map
        manifestSeen.withLock { $0 = text }
        // Both describe the folders as this engine last saw them, which the writer has changed since.
        listingCache.withLock { $0 = nil }
        statistics.withLock { $0 = nil }
    }

    /// Brings a read-only engine's map up to date with the manifest (waiting out a split in
    /// progress), in a barrier; returns the manifest's text.
    private func refreshMap() async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            queue.async(flags: .barrier) {
                continuation.resume(
                    with: Result {
                        let (text, map) = try StoreCore.settledManifest(at: self.manifestPath)
                        if text != self.manifestSeen.withLock({ $0 }) { self.adopt(text, map) }
                        return text
                    })
            }
        }
    }

    /// ``read(_:)`` for one step of a scan (a bucket of a listing, of the totals): a read-only engine
    /// brings its map up to date first, reads the manifest again after `body`, and runs the step again
    /// when a split overlapped it (the manifest changed), up to ``scanRetries`` times.
    func readStep<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard readOnly else { return try await read(body) }
        var attempt = 1
        while true {
            let before = try await refreshMap()
            let (result, after) = try await read { [manifestPath] in (try body(), try StoreCore.readManifest(at: manifestPath).text) }
            if after == before || attempt == StoreCore.scanRetries { return result }
            attempt += 1
        }
    }

    /// A whole scan (`verify`) by a read-only engine: run again while a split overlapped it, like ``readStep(_:)``.
    func scanned<T: Sendable>(_ scan: () async throws -> T) async throws -> T {
        guard readOnly else { return try await scan() }
        var attempt = 1
        while true {
            let before = try await refreshMap()
            let result = try await scan()
            let after = try await read { [manifestPath] in try StoreCore.readManifest(at: manifestPath).text }
            if after == before || attempt == StoreCore.scanRetries { return result }
            attempt += 1
        }
    }

    /// Count and bytes for a read-only engine, which cannot keep totals current (the writer's commits
    /// are not its own): counted afresh, one bucket per ``readStep(_:)``.
    func countedStatistics() async throws -> StoreStatistics {
        var totals = StoreStatistics(count: 0, bytes: 0)
        var from: [UInt8] = []
        while true {
            let step = try await readStep { [from] () throws -> (count: Int, bytes: Int64, next: [UInt8]?) in
                let map = self.confined.map
                let index = map.index(for: from)
                let folder = self.bucketPath(map.buckets[index].number)
                var count = 0
                var bytes: Int64 = 0
                for entry in try self.entries(ofBucketFolder: folder) where !entry.identifier.lexicographicallyPrecedes(from) {
                    if case .present(let header) = try self.existingBlob(at: folder + "/" + entry.fileName) {
                        count += 1
                        bytes += header.size
                    }
                }
                return (count, bytes, index + 1 < map.buckets.count ? map.buckets[index + 1].lowerBound : nil)
            }
            totals.count += step.count
            totals.bytes += step.bytes
            guard let next = step.next else { return totals }
            from = next
        }
    }

    /// Throws for a change asked of a read-only engine: it holds no lock, so it must not write.
    func refuseIfReadOnly(_ operation: String) throws {
        guard readOnly else { return }
        throw readOnlyRefusal(operation)
    }

    /// The error for a change asked of a read-only engine.
    func readOnlyRefusal(_ operation: String) -> BlobStoreError {
        BlobStoreError.io(operation: operation + " (store opened read-only)", path: storePath, errno: Errno(rawValue: EROFS))
    }
}
