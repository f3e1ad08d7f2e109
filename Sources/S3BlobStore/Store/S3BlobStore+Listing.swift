internal import BlobSystem
public import BlobStore
import Foundation

/// One object of the store's listing: its key, the identifier it holds and its size.
struct S3ListedObject: Sendable {
    var key: String
    var identifier: String
    var size: Int64
}

extension S3BlobStore {
    // MARK: - Listing keys

    /// One ListObjectsV2 page of the store's objects whose identifiers start with `prefix`, after
    /// identifier `after` (first page) or from `token`. Keys that are not valid identifiers are
    /// left out (no blob of this store has one). Blocking.
    func listObjects(prefix: String, after: String?, token: String?, maxKeys: Int = S3Bucket.maximumKeysPerPage) throws
        -> (objects: [S3ListedObject], next: String?)
    {
        let storePrefix = layout.blobPrefix(store: name)
        let context = client.bucket.context("ListObjectsV2", key: storePrefix + prefix)
        do {
            let request = try client.bucket.listObjects(
                prefix: storePrefix + prefix, continuationToken: token, startAfter: token == nil ? after.map { storePrefix + $0 } : nil,
                maxKeys: maxKeys)
            let response = try client.send(request, context: context)
            let page = try S3ListObjectsPage(xml: response.body)
            let objects = page.objects.compactMap { object -> S3ListedObject? in
                guard let identifier = layout.identifier(store: name, key: object.key), BlobIdentifier.violation(in: identifier) == nil
                else { return nil }
                return S3ListedObject(key: object.key, identifier: identifier, size: object.size)
            }
            return (objects, page.isTruncated ? page.nextContinuationToken : nil)
        } catch let error as S3RequestError {
            throw unavailable(.refused(error))
        } catch let error as S3ClientError {
            throw unavailable(error)
        } catch let error as S3ResponseParseError {
            throw unavailable(context, reason: error.reason)
        }
    }

    /// Every object of the store (whose identifier starts with `prefix`), page after page. Blocking.
    func allObjects(prefix: String = "") throws -> [S3ListedObject] {
        var all: [S3ListedObject] = []
        var token: String?
        repeat {
            let page = try listObjects(prefix: prefix, after: nil, token: token)
            all += page.objects
            token = page.next
        } while token != nil
        return all
    }

    // MARK: - BlobStoring

    /// One page in identifier order: a listing of keys, then a HEAD of each (8 at once) for its
    /// metadata. Foreign and expired objects are left out; `contentTypePrefix` is applied after the
    /// HEAD. Sorting by `.modified` is refused with ``BlobStoreError/invalidQuery(store:reason:)``:
    /// S3 lists keys in byte order only (docs/SCALE-OUT.md).
    public func list(_ query: ListQuery) async throws -> ListPage {
        try await BlockingThreads.run { try self.listPage(query) }
    }

    /// ``list(_:)``, blocking.
    func listPage(_ query: ListQuery) throws -> ListPage {
        guard (1...ListQuery.maximumLimit).contains(query.limit) else {
            throw BlobStoreError.invalidQuery(store: name, reason: "limit must be 1...\(ListQuery.maximumLimit) (got \(query.limit))")
        }
        guard query.sort == .identifier else {
            throw BlobStoreError.invalidQuery(
                store: name, reason: "an S3 store lists by identifier only (S3 lists keys in byte order and keeps no index by date); "
                    + "sort '\(query.sort.rawValue)' is not available")
        }
        var after: String?
        if let cursor = query.cursor {
            guard let identifier = Self.identifier(inCursor: cursor) else {
                throw BlobStoreError.invalidQuery(store: name, reason: "malformed cursor '\(cursor.prefix(60))' for sort 'identifier'")
            }
            after = identifier
        }
        var items: [BlobMetadata] = []
        var token: String?
        var first = true
        while items.count <= query.limit, first || token != nil {
            // Keys for the page and the one after it (which tells whether a next page exists) are
            // usually enough; a content-type filter that drops some pages on with the token.
            let page = try listObjects(
                prefix: query.prefix, after: after, token: token, maxKeys: min(S3Bucket.maximumKeysPerPage, max(query.limit + 1, 64)))
            first = false
            token = page.next
            var pending = page.objects[...]
            while !pending.isEmpty, items.count <= query.limit {
                let batch = Array(pending.prefix(max(Self.parallelRequests, query.limit + 1 - items.count)))
                pending = pending.dropFirst(batch.count)
                let now = now()
                let found = try S3Parallel.map(batch, width: Self.parallelRequests) { object in
                    try self.headObject(key: object.key, identifier: object.identifier)?.live(at: now)
                }
                for case let metadata? in found {
                    if let type = query.contentTypePrefix, !metadata.contentType.hasPrefix(type) { continue }
                    items.append(metadata)
                }
            }
        }
        guard items.count > query.limit else { return ListPage(items: items, nextCursor: nil) }
        let page = Array(items.prefix(query.limit))
        return ListPage(items: page, nextCursor: Self.cursor(after: page[page.count - 1].identifier))
    }

    /// Count and bytes of the store's objects, from the listings alone (no HEAD): an expired blob
    /// not yet overwritten, or a foreign object under the store's prefix, is counted too.
    public func statistics() async throws -> StoreStatistics {
        try await BlockingThreads.run {
            let all = try self.allObjects()
            return StoreStatistics(count: all.count, bytes: all.reduce(0) { $0 + $1.size })
        }
    }

    /// The cursor after `identifier`: `i` and its UTF-8 bytes in hex, as every store writes it.
    static func cursor(after identifier: String) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text = "i"
        for byte in identifier.utf8 {
            text.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
            text.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
        }
        return text
    }

    /// The identifier a cursor made by ``cursor(after:)`` names, or `nil`.
    static func identifier(inCursor cursor: String) -> String? {
        let digits = Array(cursor.utf8.dropFirst())
        guard cursor.hasPrefix("i"), digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return String(validating: bytes, as: UTF8.self)
    }

    // MARK: - Removing

    /// Removes a blob if `condition` holds: a HEAD, the check, then a DELETE. Checked, not atomic:
    /// the gateway ignores `If-Match` on DELETE, so a version written between the HEAD and the DELETE
    /// is removed too (docs/SCALE-OUT.md, "Consistency").
    @discardableResult
    public func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        try await BlockingThreads.run { try self.removeBlob(identifier, condition: condition) }
    }

    /// ``remove(_:condition:)``, blocking.
    func removeBlob(_ identifier: String, condition: WriteCondition) throws -> Bool {
        let key = try key(for: identifier)
        let object = try headObject(key: key, identifier: identifier)
        let live = object?.live(at: now())
        switch condition {
        case .none:
            break
        case .ifNoneMatch:
            if let live { throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: nil, actual: live.etag) }
        case .ifMatch(let expected):
            guard let live, live.etag == expected else {
                throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: expected, actual: live?.etag)
            }
        }
        guard let object else { return false }
        if case .failure(let invalid) = object.metadata, condition != .none { throw foreign(key, invalid) }
        try deleteObject(key: key, identifier: identifier)
        // A foreign object goes too (only an unconditional remove reaches here with one); an expired blob goes quietly.
        let existed = live != nil || (try? object.metadata.get()) == nil
        if existed { state.withLock { $0.publish(.removed(identifier: identifier), store: name, date: now()) } }
        return existed
    }

    /// Removes every object under the store's prefix (foreign ones too), one DELETE per key, 8 at
    /// once: never DeleteObjects, which aborts the Ceph gateway when the bucket has notifications.
    /// Posts ``BlobChange/Kind/removedAll`` even when the store was empty.
    public func removeAll() async throws {
        try await BlockingThreads.run { try self.removeEverything() }
    }

    /// ``removeAll()``, blocking.
    func removeEverything() throws {
        let all = try allObjects()
        _ = try S3Parallel.map(all, width: Self.parallelRequests) { object in
            try self.deleteObject(key: object.key, identifier: object.identifier)
        }
        state.withLock { $0.publish(.removedAll, store: name, date: now()) }
    }

    /// One DeleteObject, recorded as this instance's own removal. Blocking.
    func deleteObject(key: String, identifier: String) throws {
        let context = client.bucket.context("DeleteObject", key: key)
        recordOwnRemoval(identifier)
        do {
            _ = try client.send(try client.bucket.deleteObject(key: key), context: context, alsoAccepted: [404])
        } catch let error as S3RequestError {
            throw unavailable(.refused(error))
        } catch let error as S3ClientError {
            throw unavailable(error)
        }
    }
}
