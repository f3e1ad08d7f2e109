/// The store's buckets: folders that each hold the blobs of one identifier range.
///
/// Identifier order is preserved across buckets, so a listing walks buckets in order and
/// sorts one bucket at a time; a bucket that grows past its capacity is split in two (where:
/// ``BucketCut``), so no folder grows without bound however the identifiers are distributed.
/// The map lives in the store's `manifest` file (small: one line per bucket) and in memory.
struct BucketMap: Equatable, Sendable {
    /// One bucket: its folder number and the smallest identifier it may hold.
    struct Bucket: Equatable, Sendable {
        /// Folder name under `b/`.
        var number: Int
        /// Identifiers `>=` this (UTF-8 bytes) and `<` the next bucket's bound live here.
        var lowerBound: [UInt8]
    }

    /// A split that was committed to the manifest but whose files may not all have moved yet.
    struct PendingSplit: Equatable, Sendable {
        /// The new upper bucket.
        var newBucket: Int
        /// The bucket it was split from.
        var fromBucket: Int
    }

    /// Buckets in identifier order; the first has an empty lower bound.
    private(set) var buckets: [Bucket]
    /// The next unused folder number.
    private(set) var nextNumber: Int
    /// A split to finish on open, if the last one was interrupted.
    var pendingSplit: PendingSplit?

    /// A map with one empty bucket.
    static let initial = BucketMap(buckets: [Bucket(number: 1, lowerBound: [])], nextNumber: 2, pendingSplit: nil)

    /// The position in ``buckets`` of the bucket that holds `identifier`.
    func index(for identifier: some Collection<UInt8>) -> Int {
        var low = 0, high = buckets.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if !identifier.lexicographicallyPrecedes(buckets[mid].lowerBound) {
                low = mid
            } else {
                high = mid - 1
            }
        }
        return low
    }

    /// Whether `identifier` falls in the range of the bucket at `index`.
    func contains(_ identifier: [UInt8], inBucketAt index: Int) -> Bool { self.index(for: identifier) == index }

    /// Adds a bucket numbered ``nextNumber`` for identifiers from `bound` on, after the bucket at `index`.
    mutating func split(bucketAt index: Int, at bound: [UInt8]) -> Bucket {
        precondition(buckets[index].lowerBound.lexicographicallyPrecedes(bound))
        precondition(index + 1 == buckets.count || bound.lexicographicallyPrecedes(buckets[index + 1].lowerBound))
        let bucket = Bucket(number: nextNumber, lowerBound: bound)
        buckets.insert(bucket, at: index + 1)
        nextNumber += 1
        pendingSplit = PendingSplit(newBucket: bucket.number, fromBucket: buckets[index].number)
        return bucket
    }

    // MARK: - Manifest text

    private static let headerLine = "blobstore-manifest 1"

    /// The manifest text: a header line, `next N`, one `bucket N HEXBOUND` per bucket, and `splitting NEW FROM` while a split is pending.
    func manifestText() -> String {
        var lines = [BucketMap.headerLine, "next \(nextNumber)"]
        for bucket in buckets {
            lines.append("bucket \(bucket.number) \(bucket.lowerBound.isEmpty ? "-" : Hex.encode(bucket.lowerBound))")
        }
        if let split = pendingSplit { lines.append("splitting \(split.newBucket) \(split.fromBucket)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses manifest text; the reason says what is wrong.
    static func parse(_ text: String) -> Result<BucketMap, ManifestError> {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)[...]
        guard lines.first == Substring(headerLine) else { return .failure(ManifestError(reason: "missing header line '\(headerLine)'")) }
        lines = lines.dropFirst()
        var next: Int?
        var buckets: [Bucket] = []
        var pending: PendingSplit?
        for line in lines {
            let fields = line.split(separator: " ")
            switch (fields.first, fields.count) {
            case ("next", 2):
                next = Int(fields[1])
            case ("bucket", 3):
                guard let number = Int(fields[1]), number > 0 else { return .failure(ManifestError(reason: "bad bucket line '\(line)'")) }
                let bound: [UInt8]
                if fields[2] == "-" {
                    bound = []
                } else {
                    guard let decoded = Hex.decode(fields[2]) else { return .failure(ManifestError(reason: "bad bucket bound in '\(line)'")) }
                    bound = decoded
                }
                buckets.append(Bucket(number: number, lowerBound: bound))
            case ("splitting", 3):
                guard let new = Int(fields[1]), let from = Int(fields[2]) else { return .failure(ManifestError(reason: "bad line '\(line)'")) }
                pending = PendingSplit(newBucket: new, fromBucket: from)
            default:
                return .failure(ManifestError(reason: "unknown line '\(line)'"))
            }
        }
        guard let nextNumber = next else { return .failure(ManifestError(reason: "missing 'next' line")) }
        guard let first = buckets.first, first.lowerBound.isEmpty else { return .failure(ManifestError(reason: "first bucket must have bound '-'")) }
        for (a, b) in zip(buckets, buckets.dropFirst()) where !a.lowerBound.lexicographicallyPrecedes(b.lowerBound) {
            return .failure(ManifestError(reason: "bucket bounds out of order at bucket \(b.number)"))
        }
        guard buckets.allSatisfy({ $0.number < nextNumber }), Set(buckets.map(\.number)).count == buckets.count else {
            return .failure(ManifestError(reason: "bucket numbers repeat or reach 'next'"))
        }
        return .success(BucketMap(buckets: buckets, nextNumber: nextNumber, pendingSplit: pending))
    }

    /// Why a manifest did not parse.
    struct ManifestError: Error, Equatable {
        var reason: String
    }
}
