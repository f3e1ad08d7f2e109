internal import BlobSystem
import Dispatch

/// How a read-only engine keeps up with the bucket splits of the process that writes the store
/// (STORAGE.md, "Processes").
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
/// - each step of a scan (one bucket of a listing or of the totals; all of verify) reads the manifest
///   before and after, and runs again when it changed in between, or when a split was still marked
///   before it (the writer moves files the whole time a mark stands), up to ``scanRetries`` times
///   (``ReadPath/step(_:)``).
///
/// Owned by a read-only engine. ``seen`` holds its own mutex; the map it adopts is the index's,
/// replaced in a barrier on the store queue.
final class ManifestFollower: Sendable {
    /// How many newer manifests a missed lookup tries before "not found".
    static let missRetries = 20
    /// How many times a scan runs while splits keep overlapping it.
    static let scanRetries = 20

    private let queue: DispatchQueue
    private let index: BucketIndex
    private let reader: BlobReader
    private let paths: StorePaths
    /// What describes the folders as this engine last saw them, dropped when it adopts a newer map.
    private let listingCache: ListingCache
    private let totals: StoreTotals
    /// The text of the manifest the index's map was read from, replaced together with the map
    /// (inside a barrier), so a read can tell whether the map moved on since.
    private let seen: Locked<String>

    init(manifestText: String, queue: DispatchQueue, index: BucketIndex, reader: BlobReader, paths: StorePaths, listingCache: ListingCache, totals: StoreTotals) {
        seen = Locked(manifestText)
        self.queue = queue
        self.index = index
        self.reader = reader
        self.paths = paths
        self.listingCache = listingCache
        self.totals = totals
    }

    /// The manifest's text as it is on disk now.
    func manifestText() throws -> String { try Manifest.read(at: paths.manifest).text }

    /// After a lookup of `identifier` missed under the map the index had: looks again under each
    /// newer manifest (see the type's documentation); `nil` when the miss is real. On the queue.
    func lookAgain(for identifier: String, readLength: Int) throws -> OpenedBlob? {
        var last = seen.withLock { $0 }
        for _ in 0..<ManifestFollower.missRetries {
            let (text, map) = try Manifest.settled(at: paths.manifest)
            if text == last { break }
            adoptLater(text, map)
            let index = map.index(for: identifier.utf8)
            var buckets = [map.buckets[index].number]
            if let split = map.pendingSplit, split.newBucket == buckets[0] { buckets.insert(split.fromBucket, at: 0) }
            for bucket in buckets {
                if let blob = try reader.open(at: paths.file(of: identifier, inBucket: bucket), identifier: identifier, readLength: readLength) {
                    return blob
                }
            }
            last = text
        }
        return nil
    }

    /// Makes a newer manifest's map the index's map, in a barrier (a read must not see its map change
    /// under it), unless a newer one was adopted already.
    private func adoptLater(_ text: String, _ map: BucketMap) {
        queue.async(flags: .barrier) {
            let current = self.index.map
            let newer = map.nextNumber > current.nextNumber || (map.nextNumber == current.nextNumber && current.pendingSplit != nil && map.pendingSplit == nil)
            guard newer else { return }
            self.adopt(text, map)
        }
    }

    /// Replaces the map. In a barrier.
    private func adopt(_ text: String, _ map: BucketMap) {
        index.replaceMap(map)
        seen.withLock { $0 = text }
        // Both describe the folders as this engine last saw them, which the writer has changed since.
        listingCache.forget()
        totals.forget()
    }

    /// Brings the index's map up to date with the manifest (waiting out a split in progress), in a
    /// barrier; returns the manifest's text, and whether a split was still marked in it (the wait
    /// for it ran out: the writer may be splitting bucket after bucket, or have died mid-split).
    func refresh() async throws -> (text: String, splitting: Bool) {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(text: String, splitting: Bool), any Error>) in
            queue.async(flags: .barrier) {
                continuation.resume(
                    with: Result {
                        let (text, map) = try Manifest.settled(at: self.paths.manifest)
                        if text != self.seen.withLock({ $0 }) { self.adopt(text, map) }
                        return (text, map.pendingSplit != nil)
                    })
            }
        }
    }
}
