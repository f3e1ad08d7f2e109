internal import BlobSystem
import Dispatch
import Foundation

extension StoreCore {
    /// One page of `query`. Each bucket is read in its own read item, so a long listing lets commits
    /// through between buckets; the cursor position (not an offset) keeps the walk correct across them.
    func list(_ query: ListQuery) async throws -> ListPage {
        let cursor = try query.validated(store: name)
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
            let step = try await readStep { [after, from] () throws -> (items: [BlobMetadata], nextBound: [UInt8]?, done: Bool) in
                let start = after.map { $0.lexicographicallyPrecedes(from) ? from : $0 } ?? from
                let index = self.confined.map.index(for: start)
                let bucket = self.confined.map.buckets[index]
                let folder = self.bucketPath(bucket.number)
                var found: [BlobMetadata] = []
                for entry in try self.sortedEntries(ofBucket: bucket.number) {
                    if entry.identifier.lexicographicallyPrecedes(from) { continue }
                    if let after, !after.lexicographicallyPrecedes(entry.identifier) { continue }
                    if !entry.identifier.starts(with: prefix) { return (found, nil, true) }
                    guard case .present(let header) = try self.existingBlob(at: folder + "/" + entry.fileName) else { continue }
                    if let type = query.contentTypePrefix, !header.contentType.hasPrefix(type) { continue }
                    found.append(header.metadata)
                    if found.count > query.limit { break }
                }
                let next = index + 1 < self.confined.map.buckets.count ? self.confined.map.buckets[index + 1].lowerBound : nil
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
            let (found, count) = try await readStep { () throws -> ([BlobMetadata], Int) in
                let buckets = self.confined.map.buckets
                guard index < buckets.count else { return ([], buckets.count) }
                let folder = self.bucketPath(buckets[index].number)
                var found: [BlobMetadata] = []
                for entry in try self.entries(ofBucketFolder: folder) where entry.identifier.starts(with: prefix) {
                    guard case .present(let header) = try self.existingBlob(at: folder + "/" + entry.fileName) else { continue }
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

    /// Count and bytes: computed by one scan the first time, then kept current by every commit.
    func statistics() async throws -> StoreStatistics {
        if let known = statistics.withLock({ $0 }) { return known }
        return try await read {
            if let known = self.statistics.withLock({ $0 }) { return known }
            var totals = StoreStatistics(count: 0, bytes: 0)
            for bucket in self.confined.map.buckets {
                let folder = self.bucketPath(bucket.number)
                for entry in try self.entries(ofBucketFolder: folder) {
                    if case .present(let header) = try self.existingBlob(at: folder + "/" + entry.fileName) {
                        totals.count += 1
                        totals.bytes += header.size
                    }
                }
            }
            // Commits cannot run during this read, so the totals are exact; commits keep them so.
            self.statistics.withLock { $0 = totals }
            return totals
        }
    }
}
