internal import BlobSystem
import Dispatch

/// The index: which bucket folder holds which identifiers (the ``BucketMap``, kept in the manifest),
/// how many blobs each bucket holds, and a version per bucket that listings cache against. Splits a
/// bucket that outgrows its capacity (``split(bucketAt:after:touched:)``) and finishes a split a crash
/// interrupted (``recoverAtOpen()``).
///
/// Owned by the store's engine and confined to its queue: read inside the queue's work items (checked
/// with `dispatchPrecondition`), changed only inside its barrier items, which is its lock. The one
/// exception is ``published``, a copy of the map under its own mutex for reads that skip the queue.
final class BucketIndex: @unchecked Sendable {
    let paths: StorePaths
    /// How many blobs a bucket may hold before it is split.
    let capacity: Int
    private let queue: DispatchQueue
    private var current: BucketMap
    /// A copy of the map for reads that skip the queue (``CachedReads``), replaced inside the barrier
    /// whenever the map changes.
    let published: Locked<BucketMap>
    /// Blob count per bucket number, learned lazily the first time a commit needs it.
    private var counts: [Int: Int] = [:]
    /// Raised whenever a bucket gains a blob (a new put, a split) or loses one (a remove); see
    /// ``version(ofBucket:)``. A remove-all needs no entry: a listing skips entries whose file is
    /// gone, and every later put or split raises the version of the bucket it fills.
    private var versions: [Int: UInt64] = [:]
    private var lastVersion: UInt64 = 0

    init(map: BucketMap, paths: StorePaths, capacity: Int, queue: DispatchQueue) {
        current = map
        published = Locked(map)
        self.paths = paths
        self.capacity = capacity
        self.queue = queue
    }

    /// The bucket map. On the queue.
    var map: BucketMap {
        dispatchPrecondition(condition: .onQueue(queue))
        return current
    }

    /// Makes `map` the map (and its published copy). In a barrier.
    func replaceMap(_ map: BucketMap) {
        dispatchPrecondition(condition: .onQueueAsBarrier(queue))
        current = map
        published.withLock { $0 = map }
    }

    /// The bucket folder, file path and bucket position of `identifier` under the current map. On the queue.
    func location(of identifier: String) -> (folder: String, path: String, bucketIndex: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        let index = current.index(for: identifier.utf8)
        let folder = paths.bucket(current.buckets[index].number)
        return (folder, folder + "/" + FileNameCoding.name(for: identifier), index)
    }

    /// The file path of `identifier` under the current map, built in one allocation: every read
    /// starts here. On the queue.
    func path(of identifier: String) -> String {
        dispatchPrecondition(condition: .onQueue(queue))
        return paths.file(of: identifier, inBucket: current.buckets[current.index(for: identifier.utf8)].number)
    }

    /// A value that differs after any change that adds a blob to bucket `number` or removes one from it. On the queue.
    func version(ofBucket number: Int) -> UInt64 {
        dispatchPrecondition(condition: .onQueue(queue))
        return versions[number] ?? 0
    }

    /// Bucket `number` gained or lost a blob. In a barrier.
    func bucketChanged(_ number: Int) {
        dispatchPrecondition(condition: .onQueueAsBarrier(queue))
        lastVersion += 1
        versions[number] = lastVersion
    }

    /// Counts a blob new to (`delta` 1) or gone from (-1) the bucket at `index`, learning the bucket's
    /// count from its folder the first time it is needed. In a barrier.
    func adjustCount(bucketAt index: Int, by delta: Int) {
        let number = map.buckets[index].number
        bucketChanged(number)
        if let count = counts[number] {
            counts[number] = count + delta
        } else if let names = try? DirectoryStream.entries(of: paths.bucket(number)) {
            counts[number] = names.count  // already includes this change
        }
    }

    /// Counts `identifier`, a blob new to the bucket at `index`, and splits the bucket if it is now
    /// over capacity; a split adds the folders it changed to `touched`. In a barrier.
    func added(_ identifier: String, bucketAt index: Int, touched: inout Set<String>) throws {
        adjustCount(bucketAt: index, by: 1)
        if let count = counts[current.buckets[index].number], count > capacity {
            try split(bucketAt: index, after: identifier, touched: &touched)
        }
    }

    /// Sets or forgets (`nil`) the blob count of bucket `number`. In a barrier.
    func setCount(_ count: Int?, ofBucket number: Int) {
        dispatchPrecondition(condition: .onQueueAsBarrier(queue))
        counts[number] = count
    }

    /// The blob count of bucket `number`, if known. On the queue.
    func count(ofBucket number: Int) -> Int? {
        dispatchPrecondition(condition: .onQueue(queue))
        return counts[number]
    }

    /// Drops the count of the bucket at `index` (a repair moved files out of it): learnt again from
    /// its folder. In a barrier.
    func forgetCount(ofBucketAt index: Int) {
        let number = map.buckets[index].number
        setCount(nil, ofBucket: number)
        bucketChanged(number)
    }

    /// Starts the empty map of a remove-all, whose `b/` and first bucket folder exist already. In a barrier.
    func reset() throws {
        replaceMap(.initial)
        counts = [1: 0]
        try writeManifest()
    }

    /// Writes the current map to the manifest, atomically and durably. In a barrier (or while opening).
    func writeManifest() throws {
        try Manifest.write(current, paths: paths)
    }
}
