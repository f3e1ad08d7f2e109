import BlobStore
import Foundation
import HTTP1

extension Router {
    // MARK: GET / HEAD

    /// Answers GET or HEAD for one blob (blocking disk I/O on the loop thread, by design: page-cache reads are short).
    func get(store name: String, identifier: String, head: HTTPRequestHead) throws -> Response {
        let store = try existingStore(name)
        let handle = try store.openForReading(identifier)
        let metadata = handle.metadata
        if let condition = head.ifNoneMatch, Router.etagList(condition, matches: metadata.etag) {
            handle.close()
            // RFC 9110 §15.4.5: of the fields a 304 repeats (Cache-Control, Content-Location, Date,
            // ETag, Expires, Vary), a 200 here has Date and ETag; the rest of the representation's
            // metadata is left out, as that section asks (the client holds it already).
            var response = Response(status: .notModified)
            response.header(.etag, "\"\(metadata.etag.rawValue)\"")
            return response
        }
        var response = Response(status: .ok)
        // Room for every header a GET writes (ETag, dates, type, ranges), grown once instead of step by step.
        response.headerLines.reserveCapacity(384)
        Router.appendMetadataHeaders(metadata, into: &response)
        response.header(.acceptRanges, "bytes")
        response.omitBody = head.method == .head

        var range: Range<Int64> = 0..<metadata.size
        if let header = head.range {
            switch ByteRange.parse(header, size: metadata.size) {
            case .ignore: break
            case .unsatisfiable:
                handle.close()
                var error = APIError(BlobStoreError.rangeNotSatisfiable(store: name, identifier: identifier, size: metadata.size)).response()
                error.header(.contentRange, "bytes */\(metadata.size)")
                error.omitBody = head.method == .head
                return error
            case .satisfiable(let r):
                range = r
                response.status = .partialContent
                response.header(.contentRange, "bytes \(r.lowerBound)-\(r.upperBound - 1)/\(metadata.size)")
            }
        }
        response.header(.contentType, metadata.contentType)
        let count = range.upperBound - range.lowerBound
        if head.method == .head {
            handle.close()
            response.announcedLength = count
        } else if count <= Router.inlineBodyLimit {
            // Read (and checked against the header: a damaged blob is `500 corrupt` before anything
            // is sent) into memory. A whole blob that came with the header is sent from those bytes.
            defer { handle.close() }
            response.content = try handle.read(range)
        } else {
            response.file = .init(handle: handle, offset: handle.contentOffset + range.lowerBound, count: count)
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
            response.header(name: "Blob-Created", bytes: UnsafeBufferPointer(rebasing: scratch[..<HTTPDates.rfc3339Length]))
        }
        if !metadata.userMetadata.isEmpty {
            for (key, value) in metadata.userMetadata.sorted(by: { $0.key < $1.key }) {
                response.header("Blob-Meta-" + key, value)
            }
        }
        if let image = metadata.image {
            response.header("Blob-Image-Format", image.format.rawValue)
            response.header("Blob-Image-Width", String(image.width))
            response.header("Blob-Image-Height", String(image.height))
        }
    }

    /// Whether a field name starts with `blob-`, in any case.
    static func hasBlobPrefix(_ name: String) -> Bool {
        var remaining = "blob-".utf8.makeIterator()
        for byte in name.utf8 {
            guard let expected = remaining.next() else { return true }
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != expected { return false }
        }
        return remaining.next() == nil
    }

    /// Whether an `If-None-Match` list (`*` or comma-separated, possibly weak, tags) names `etag`.
    static func etagList(_ list: String, matches etag: ETag) -> Bool {
        for item in list.split(separator: ",") {
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if ETag(tag) == etag { return true }
        }
        return false
    }

    // MARK: PUT

    /// Starts a put: validates the headers, opens (creating) the store and the upload.
    func put(store name: String, identifier: String, head: HTTPRequestHead) throws -> RequestAction {
        var options = PutOptions()
        options.contentType = head.contentType
        options.condition = try Router.writeCondition(head, allowNoneMatch: true)
        for index in head.headers.indices {
            let field = head.headers[index]
            // Only `Blob-…` fields matter here; lowercasing every name cost an allocation per field.
            guard Router.hasBlobPrefix(field.name) else { continue }
            let lower = field.name.lowercased()
            if lower.hasPrefix("blob-meta-") {
                let key = String(lower.dropFirst("blob-meta-".count))
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
            } else if lower == "blob-validate" {
                switch field.value.lowercased() {
                case "image": options.validation = .image
                case "record": options.validation = .record
                case "none": options.validation = .none
                default: throw APIError(.badRequest, "bad_request", "Blob-Validate must be 'image', 'record' or 'none' (got '\(field.value)')")
                }
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
        if case .contentLength(let length) = head.framing, length > stores.configuration.maximumBlobSize {
            throw BlobStoreError.tooLarge(what: "blob '\(identifier.prefix(100))'", limit: stores.configuration.maximumBlobSize, actual: length)
        }
        // A claim on a store created for this put: ended by the outcome below, or released with the
        // request if it ends earlier (a refusal here, a malformed body, a vanished client), which
        // removes the store again when no put to it committed.
        let (store, claim) = try stores.storeForPut(name)
        let upload = try store.beginUpload(identifier: identifier, options: options)
        return .upload(upload) { result in
            if case .success = result { claim?.end(committed: true) } else { claim?.end(committed: false) }
            switch result {
            case .success(let metadata):
                // `created` is kept across overwrites, so it equals `modified` only for a new blob.
                let created = metadata.created == metadata.modified
                var response = Response(status: created ? .created : .ok, json: JSONWriter.metadata(metadata))
                Router.appendMetadataHeaders(metadata, into: &response)
                return response
            case .failure(let error):
                return APIError(error).response()
            }
        }
    }
}
