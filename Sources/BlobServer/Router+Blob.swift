import BlobProtocol
import BlobStore
import Foundation
import HTTP1

extension Router {
    // MARK: GET / HEAD

    /// What a GET or HEAD of one blob asks, apart from the blob: kept to answer off the loop.
    struct ReadRequest: Sendable {
        var store: String
        var identifier: String
        var isHead: Bool
        var ifNoneMatch: String?
        var range: String?
    }

    /// Answers GET or HEAD for one blob: on the loop when the backend has the version at hand
    /// (``ServedBackend/openIfReady(_:)``) and its answer needs no waiting read, else on a
    /// blocking-work thread.
    func get(store name: String, identifier: String, head: HTTPRequestHead) throws -> RequestAction {
        let request = ReadRequest(store: name, identifier: identifier, isHead: head.method == .head, ifNoneMatch: head.ifNoneMatch, range: head.range)
        if let store = stores.openedStore(name), let blob = store.openIfReady(identifier) {
            do {
                if let response = try Router.answer(request, from: blob, mayWait: false) { return .respond(response) }
            } catch {
                blob.close()
                throw error
            }
            return .offloadBlocking(.quick) {
                do { return try Router.answer(request, from: blob, mayWait: true)! } catch {
                    blob.close()
                    return Router.errorResponse(error)
                }
            }
        }
        // The store's existence is told before the identifier's validity (a 404 for a missing store).
        try StoreName.validate(name)
        return .offloadBlocking(.quick) { [self] in
            do {
                let blob = try existingStore(name).open(identifier)
                do { return try Router.answer(request, from: blob, mayWait: true)! } catch {
                    blob.close()
                    throw error
                }
            } catch {
                return Router.errorResponse(error)
            }
        }
    }

    /// The response to `request` from the opened version `blob`, which it takes over (closes, or
    /// hands to the response to send from). `nil` when answering needs a read that may wait and
    /// `mayWait` is false (the caller then answers off the loop, `blob` still open).
    static func answer(_ request: ReadRequest, from blob: any ServedBlob, mayWait: Bool) throws -> Response? {
        let metadata = blob.metadata
        if let condition = request.ifNoneMatch, Router.etagList(condition, matches: metadata.etag) {
            blob.close()
            // RFC 9110 §15.4.5: of the fields a 304 repeats (Cache-Control, Content-Location, Date,
            // ETag, Expires, Vary), a 200 here has Date and ETag; the rest of the representation's
            // metadata is left out, as that section asks (the client holds it already).
            var response = Response(status: .notModified)
            response.header(.etag, MetadataHeaders.etagValue(metadata.etag))
            return response
        }
        var response = Response(status: .ok)
        // Room for every header a GET writes (ETag, dates, type, ranges), grown once instead of step by step.
        response.headerLines.reserveCapacity(384)
        Router.appendMetadataHeaders(metadata, into: &response)
        response.header(.acceptRanges, "bytes")
        response.omitBody = request.isHead

        var range: Range<Int64> = 0..<metadata.size
        if let header = request.range {
            switch ByteRange.parse(header, size: metadata.size) {
            case .ignore: break
            case .unsatisfiable:
                blob.close()
                var error = APIError(BlobStoreError.rangeNotSatisfiable(store: request.store, identifier: request.identifier, size: metadata.size)).response()
                error.header(.contentRange, "bytes */\(metadata.size)")
                error.omitBody = request.isHead
                return error
            case .satisfiable(let r):
                range = r
                response.status = .partialContent
                response.header(.contentRange, "bytes \(r.lowerBound)-\(r.upperBound - 1)/\(metadata.size)")
            }
        }
        response.header(.contentType, metadata.contentType)
        let count = range.upperBound - range.lowerBound
        if request.isHead {
            blob.close()
            response.announcedLength = count
        } else if let file = blob.fileBody, count > Router.inlineBodyLimit {
            if metadata.size <= Router.checkedFirstLimit {
                // The whole blob is checked before the answer: a damaged one is `500 corrupt`, as a
                // body read into memory is. Larger blobs are checked as they go. On the loop only
                // while its pages are in the page cache (a cached read, as small bodies have);
                // the rest of the check then waits on a blocking-work thread.
                let end = file.contentOffset + metadata.size
                if mayWait {
                    try file.checkContent(throughFileOffset: end, isLast: true)
                } else if try !file.checkContentIfCached(throughFileOffset: end, isLast: true) {
                    return nil
                }
            }
            // Sent with `sendfile` by the loop.
            response.file = .init(handle: file, offset: file.contentOffset + range.lowerBound, count: count)
        } else {
            guard mayWait || blob.readsWithoutWaiting else { return nil }
            // Read (and checked against the header: a damaged blob is `500 corrupt` before anything
            // is sent) into memory. A whole blob that came with the header is sent from those bytes.
            defer { blob.close() }
            response.content = try blob.read(range)
        }
        return response
    }

    /// ETag, Last-Modified, Blob-* headers.
    static func appendMetadataHeaders(_ metadata: BlobMetadata, into response: inout Response) {
        // Formatted on the stack: these run on every GET and HEAD.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { scratch in
            let etag = metadata.etag.rawValue.utf8
            scratch[0] = 0x22  // "
            var count = 1
            for byte in etag.prefix(30) {
                scratch[count] = byte
                count += 1
            }
            scratch[count] = 0x22
            response.header(.etag, bytes: UnsafeBufferPointer(rebasing: scratch[..<(count + 1)]))
            HTTPDates.writeIMFFixdate(metadata.modified, into: scratch)
            response.header(.lastModified, bytes: UnsafeBufferPointer(rebasing: scratch[..<HTTPDates.imfFixdateLength]))
            HTTPDates.writeRFC3339(metadata.created, into: scratch)
            response.header(name: HeaderName.created.staticName, bytes: UnsafeBufferPointer(rebasing: scratch[..<HTTPDates.rfc3339Length]))
        }
        MetadataHeaders.forEachBlobField(of: metadata) { response.header($0, $1) }
    }

    /// Whether an `If-None-Match` list (`*` or comma-separated, possibly weak, tags) names `etag`.
    static func etagList(_ list: String, matches etag: ETag) -> Bool {
        for item in list.split(separator: ",") {
            var tag = item.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if ETag(String(tag)) == etag { return true }
        }
        return false
    }

    // MARK: PUT

    /// Starts a put: validates the headers, opens (creating) the store and the upload.
    func put(store name: String, identifier: String, head: HTTPRequestHead) throws -> RequestAction {
        var options = PutOptions()
        options.contentType = head.contentType
        options.condition = try Router.writeCondition(head, allowNoneMatch: true)
        options.expiry = try Router.expiry(head)
        for index in head.headers.indices {
            let field = head.headers[index]
            // Only `Blob-…` fields matter here; lowercasing every name cost an allocation per field.
            guard HeaderName.hasBlobPrefix(field.name) else { continue }
            if let key = HeaderName.userMetadataKey(fieldName: field.name) {
                // Values are UTF-8 text; decoding other bytes would store U+FFFD in their place.
                guard String(validating: head.headers.valueBytes(at: index), as: UTF8.self) != nil else {
                    throw BlobStoreError.invalidMetadata(
                        store: name, identifier: identifier, reason: "the value of metadata key '\(key)' is not valid UTF-8")
                }
                // Keys are lowercased, so `Blob-Meta-A` and `Blob-Meta-a` would be one key and one
                // value would be lost silently: refuse the request instead.
                guard options.userMetadata.updateValue(field.value, forKey: key) == nil else {
                    throw BlobStoreError.invalidMetadata(
                        store: name, identifier: identifier,
                        reason: "metadata key '\(key)' is sent twice (Blob-Meta-* names are case-insensitive)")
                }
            } else if HeaderName(fieldName: field.name) == .validate {
                guard let validation = MetadataHeaders.validation(fromValue: field.value) else {
                    throw APIError(.badRequest, "\(HeaderName.validate.rawValue) must be 'image', 'record' or 'none' (got '\(field.value)')")
                }
                options.validation = validation
            }
        }
        // Refuse a bad identifier or metadata before `create: true` makes the store's folder:
        // a refused PUT must not leave an empty store behind (the upload checks them again).
        try StoreName.validate(name)
        try BlobIdentifier.validate(identifier)
        if let reason = UserMetadataRules.violation(contentType: options.contentType, userMetadata: options.userMetadata) {
            throw BlobStoreError.invalidMetadata(store: name, identifier: identifier, reason: reason)
        }
        // A declared length over the store's maximum can never succeed: refuse it now, so that a
        // client sending `Expect: 100-continue` gets 413 at once instead of `100 Continue`.
        if case .contentLength(let length) = head.framing, length > stores.maximumBlobSize {
            throw BlobStoreError.tooLarge(what: "blob '\(identifier.prefix(100))'", limit: stores.maximumBlobSize, actual: length)
        }
        // The store and the upload are opened off the loop. A claim on a store created for this
        // put is ended by the outcome (`UploadStart.finish`), or released with the request if it ends earlier (a
        // refusal, a malformed body, a vanished client), which removes the store again when no put
        // to it committed.
        return .upload(UploadStart(stores: stores, store: name, identifier: identifier, options: options))
    }
}
