internal import BlobSystem

/// Fast path: where a full bucket is cut, chosen so that splits move few files (STORAGE.md,
/// "Buckets"; `.ci/split-waves` simulates it).
///
/// Removable on its own: without this file, ``BucketIndex/split(bucketAt:after:touched:)`` cuts at the
/// median (`entries.count / 2`), which is correct, just costlier in moves.
enum BucketCut {
    /// The position in `entries` (sorted, at least 2) of the first identifier that moves to the new
    /// bucket, the bucket having gone over capacity when `added` was put into it.
    ///
    /// When `added` is the bucket's largest identifier, the identifiers are most likely ascending
    /// (counters, timestamps, names numbered in order) and every later one will land above it too:
    /// the bucket is cut just below `added`, which alone moves, so the full lower bucket is never
    /// touched again (a B-tree's rightmost split). Otherwise ``BucketMap/cutIndex(count:median:)``.
    static func index(in entries: [BucketEntry], added: String) -> Int {
        entries[entries.count - 1].identifier.elementsEqual(added.utf8)
            ? entries.count - 1
            : BucketMap.cutIndex(count: entries.count, median: entries[entries.count / 2].identifier)
    }
}

extension BucketMap {
    /// Where to cut a full bucket whose sorted identifiers number `count` (at least 2): the index of
    /// the first identifier that moves to the new bucket, somewhere in the middle half, chosen by a
    /// hash of the `median` identifier (deterministic, but different for every split).
    ///
    /// Why not the median: evenly spread identifiers (UUIDs, hashes) fill every bucket at the same
    /// pace, so buckets cut in equal halves all reach capacity again at about the same time, and so do
    /// their halves, generation after generation. A large store then goes through "split waves":
    /// stretches of many puts during which nearly every bucket splits, each moving thousands of files,
    /// between long stretches of none. Halves of different sizes take different times to fill, which
    /// spreads the splits out at the price of slightly more moves over the store's growth.
    static func cutIndex(count: Int, median: [UInt8]) -> Int {
        precondition(count >= 2)
        let hash = median.withUnsafeBytes { XXH64.hash($0, seed: 0x5B1D_C0DE) }
        let index = count / 4 + Int(hash % UInt64(max(count / 2, 1)))
        return min(max(index, 1), count - 1)
    }
}
