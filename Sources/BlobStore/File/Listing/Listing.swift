internal import BlobSystem
import Dispatch

/// Listing: pages of blobs in identifier or modification order, and the store's totals.
///
/// Each bucket is read in its own read item on the store queue (``ReadPath/step(_:)``), so a long
/// listing lets commits through between buckets; the cursor position (not an offset) keeps the walk
/// correct across them. Owned by the store's engine; immutable, the cache and totals it shares hold
/// their own mutexes, and the index is touched only inside the read items.
final class Listing: Sendable {
    private let store: String
    private let paths: StorePaths
    private let index: BucketIndex
    private let reads: ReadPath
    private let cache: ListingCache
    private let totals: StoreTotals
    private let hooks: StoreTestHooks
    /// Listings and counts leave out expired versions (cache mode).
    private var marks: ReadMarks { reads.marks }

    init(store: String, paths: StorePaths, index: BucketIndex, reads: ReadPath, cache: ListingCache, totals: StoreTotals, hooks: StoreTestHooks) {
        self.store = store
        self.paths = paths
        self.index = index
        self.reads = reads
        self.cache = cache
        self.totals = totals
        self.hooks = hooks
    }

    /// One page of `query`.
    func list(_ query: ListQuery) async throws -> ListPage {
        let cursor = try query.validated(store: store)
        switch query.sort {
        case .identifier: return try await listByIdentifier(query, cursor: cursor)
        case .modified: return try await listByModified(query, cursor: cursor)
        }
    }

    private func listByIdentifier(_ query: ListQuery, cursor: ListCursor?) async throws -> ListPage {
        let prefix = Array(query.prefix.utf8)
        var after: [UInt8]?
        if case .afterIdentifier(let id) = cursor { after = id }
        // Resume point: identifiers > `after`, and >= `from`.
        var from = prefix
        var items: [BlobMetadata] = []
        var more = false
        while true {
            let step = try await reads.step { [after, from] () throws -> (items: [BlobMetadata], nextBound: [UInt8]?, done: Bool) in
                let start = after.map { $0.lexicographicallyPrecedes(from) ? from : $0 } ?? from
                let map = self.index.map
                let index = map.index(for: start)
                let bucket = map.buckets[index]
                let folder = self.paths.bucket(bucket.number)
                var found: [BlobMetadata] = []
                for entry in try self.sortedEntries(ofBucket: bucket.number) {
                    if entry.identifier.lexicographicallyPrecedes(from) { continue }
                    if let after, !after.lexicographicallyPrecedes(entry.identifier) { continue }
                    if !entry.identifier.starts(with: prefix) { return (found, nil, true) }
                    guard case .present(let header) = try BlobReader.existing(at: folder + "/" + entry.fileName), !self.marks.expired(header)
                    else { continue }
                    if let type = query.contentTypePrefix, !header.contentType.hasPrefix(type) { continue }
                    found.append(header.metadata)
                    if found.count > query.limit { break }
                }
                let next = index + 1 < map.buckets.count ? map.buckets[index + 1].lowerBound : nil
                return (found, next, next == nil)
            }
            for item in step.items {
                if items.count == query.limit {
                    more = true
                    break
                }
                items.append(item)
            }
            if more || step.done { break }
            guard let next = step.nextBound else { break }
            // Continue in the next bucket, but never before what was already returned.
            if let last = items.last { after = Array(last.identifier.utf8) }
            from = next.lexicographicallyPrecedes(prefix) ? prefix : next
            if !from.starts(with: prefix), prefix.lexicographicallyPrecedes(from) { break }
        }
        let nextCursor = more ? items.last.map { IdentifierOrder.cursor(after: $0, sort: .identifier).token } : nil
        return ListPage(items: items, nextCursor: nextCursor)
    }

    /// Modification order has no index: each page scans the store keeping only the best `limit + 1`.
    private func listByModified(_ query: ListQuery, cursor: ListCursor?) async throws -> ListPage {
        let prefix = Array(query.prefix.utf8)
        var best: [BlobMetadata] = []
        var bucketIndex = 0
        var bucketCount = 1
        while bucketIndex < bucketCount {
            let index = bucketIndex
            let (found, count) = try await reads.step { () throws -> ([BlobMetadata], Int) in
                let buckets = self.index.map.buckets
                guard index < buckets.count else { return ([], buckets.count) }
                let folder = self.paths.bucket(buckets[index].number)
                var found: [BlobMetadata] = []
                for entry in try BucketFolder.entries(of: folder) where entry.identifier.starts(with: prefix) {
                    guard case .present(let header) = try BlobReader.existing(at: folder + "/" + entry.fileName), !self.marks.expired(header)
                    else { continue }
                    let metadata = header.metadata
                    guard IdentifierOrder.matches(metadata, prefix: prefix, contentTypePrefix: query.contentTypePrefix),
                        IdentifierOrder.isAfter(metadata, cursor: cursor)
                    else { continue }
                    found.append(metadata)
                }
                return (found, buckets.count)
            }
            best += found
            best.sort { IdentifierOrder.ordered($0, $1, sort: .modified) }
            if best.count > query.limit + 1 { best.removeSubrange((query.limit + 1)...) }
            bucketCount = count
            bucketIndex += 1
        }
        let more = best.count > query.limit
        let items = Array(best.prefix(query.limit))
        return ListPage(items: items, nextCursor: more ? items.last.map { IdentifierOrder.cursor(after: $0, sort: .modified).token } : nil)
    }

    /// The sorted entries of bucket `number`, from the cache while the bucket is unchanged. On the queue.
    ///
    /// A read-only engine reads the folder every time: the writing process's puts and removes change
    /// a bucket without changing this engine's bucket versions (or the manifest), so a cached entry
    /// list would hide blobs committed since.
    func sortedEntries(ofBucket number: Int) throws -> [BucketEntry] {
        if reads.follower != nil { return try BucketFolder.entries(of: paths.bucket(number)) }
        let version = index.version(ofBucket: number)
        if let cached = cache.entries(ofBucket: number, version: version) { return cached }
        let entries = try BucketFolder.entries(of: paths.bucket(number))
        hooks.bucketListings.withLock { $0 += 1 }
        cache.keep(entries, ofBucket: number, version: version)
        return entries
    }

    /// Count and bytes: computed by one scan the first time, then kept current by every commit. A
    /// read-only engine, whose totals the writer's commits do not update, counts afresh every time.
    func statistics() async throws -> StoreStatistics {
        if reads.follower != nil { return try await countedStatistics() }
        if let known = totals.current { return known }
        return try await reads.read {
            if let known = self.totals.current { return known }
            var counted = StoreStatistics(count: 0, bytes: 0)
            for bucket in self.index.map.buckets {
                let folder = self.paths.bucket(bucket.number)
                for entry in try BucketFolder.entries(of: folder) {
                    if case .present(let header) = try BlobReader.existing(at: folder + "/" + entry.fileName) {
                        counted.count += 1
                        counted.bytes += header.size
                    }
                }
            }
            // Commits cannot run during this read, so the totals are exact; commits keep them so.
            self.totals.set(counted)
            return counted
        }
    }

    /// Count and bytes counted afresh, one bucket per ``ReadPath/step(_:)``.
    private func countedStatistics() async throws -> StoreStatistics {
        var counted = StoreStatistics(count: 0, bytes: 0)
        var from: [UInt8] = []
        while true {
            let step = try await reads.step { [from] () throws -> (count: Int, bytes: Int64, next: [UInt8]?) in
                let map = self.index.map
                let index = map.index(for: from)
                let folder = self.paths.bucket(map.buckets[index].number)
                var count = 0
                var bytes: Int64 = 0
                for entry in try BucketFolder.entries(of: folder) where !entry.identifier.lexicographicallyPrecedes(from) {
                    if case .present(let header) = try BlobReader.existing(at: folder + "/" + entry.fileName), !self.marks.expired(header) {
                        count += 1
                        bytes += header.size
                    }
                }
                return (count, bytes, index + 1 < map.buckets.count ? map.buckets[index + 1].lowerBound : nil)
            }
            counted.count += step.count
            counted.bytes += step.bytes
            guard let next = step.next else { return counted }
            from = next
        }
    }
}
