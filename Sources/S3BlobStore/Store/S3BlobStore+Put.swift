internal import HTTP1
internal import BlobSystem
public import BlobStore
public import Foundation

extension S3BlobStore {
    // MARK: - BlobStoring puts

    /// Stores `data` with one conditional PUT (see ``commit(_:identifier:key:options:)``).
    @discardableResult
    public func put(_ data: Data, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let key = try key(for: id)
        let spool = S3ContentSpool(store: name, identifier: id, folder: spoolFolder)
        if spool.appendsInMemory(data.count) {
            try spool.append(data)
            return try await BlockingThreads.run { try self.commit(spool, identifier: id, key: key, options: options) }
        }
        return try await BlockingThreads.run {
            try spool.append(data)
            return try self.commit(spool, identifier: id, key: key, options: options)
        }
    }

    /// Stores the chunks: gathered in memory up to 8 MiB, spooled to a temp file beyond (written on
    /// transport threads), then sent with one conditional PUT.
    @discardableResult
    public func put<Chunks: AsyncSequence>(chunks: Chunks, identifier: String?, options: PutOptions) async throws -> BlobMetadata
    where Chunks.Element == Data {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let key = try key(for: id)
        let spool = S3ContentSpool(store: name, identifier: id, folder: spoolFolder)
        for try await chunk in chunks {
            if spool.appendsInMemory(chunk.count) {
                try spool.append(chunk)
            } else {
                try await BlockingThreads.run { try spool.append(chunk) }
            }
        }
        return try await BlockingThreads.run { try self.commit(spool, identifier: id, key: key, options: options) }
    }

    /// Stores the file's content, read on a transport thread into the spool, then one conditional PUT.
    @discardableResult
    public func put(contentsOf fileURL: URL, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let key = try key(for: id)
        return try await BlockingThreads.run {
            let spool = S3ContentSpool(store: self.name, identifier: id, folder: self.spoolFolder)
            let path = fileURL.path
            let source: FileDescriptor
            do throws(Errno) { source = try FileDescriptor.open(path, .readOnly) } catch { throw BlobStoreError.io(operation: "open", path: path, errno: error) }
            try source.closeAfter {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
                defer { buffer.deallocate() }
                while true {
                    let count: Int
                    do throws(Errno) { count = try source.read(into: buffer) } catch { throw BlobStoreError.io(operation: "read", path: path, errno: error) }
                    if count == 0 { break }
                    try spool.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                }
            }
            return try self.commit(spool, identifier: id, key: key, options: options)
        }
    }

    // MARK: - Commit

    /// Checks the spooled content (image, record), then stores it under `key` with conditional
    /// PUTs, so that `created` is kept across overwrites and `options.condition` is checked by S3
    /// atomically (docs/SCALE-OUT.md, "Consistency"). Blocking; closes the spool.
    ///
    /// - `.ifNoneMatch`: `PUT If-None-Match: *`.
    /// - `.ifMatch(etag)`: the current version (from this instance's hint, else a HEAD) must have
    ///   `etag`; then `PUT If-Match: <its object ETag>` with its `created`.
    /// - `.none`: `PUT If-Match` with the hint's object ETag and `created` when this instance knows
    ///   the key, else `PUT If-None-Match: *` with `created` now; a `412` reads the current version
    ///   (HEAD) and tries again with it. The last of ``maximumPutAttempts`` attempts is a plain PUT
    ///   with the `created` it read last: a put without a condition is never refused because other
    ///   writers of the key kept winning the race.
    func commit(_ spool: S3ContentSpool, identifier: String, key: String, options: PutOptions) throws -> BlobMetadata {
        defer { spool.close() }
        let content = try spool.prepare(options: options)
        /// What the last look at the key found: nothing yet, no object, or an object.
        enum Observed {
            case unknown
            case absent
            case object(S3FoundObject)
        }
        var observed = Observed.unknown
        var lastRefusal: S3ClientError?
        // An `.ifMatch` put swaps exactly the version the hint named when it was checked: read once
        // here, since another put of this instance may replace the hint meanwhile, and a PUT
        // `If-Match` on that newer version would overwrite it unchecked (a lost update).
        var matchedHint: S3StoreState.Hint?
        if case .ifMatch = options.condition {
            if let hint = hint(identifier), hintMatches(hint, options.condition) {
                matchedHint = hint
            } else {
                observed = try headObject(key: key, identifier: identifier).map(Observed.object) ?? .absent
            }
        }
        for attempt in 0..<Self.maximumPutAttempts {
            let now = now()
            var condition: S3WriteCondition?
            let created: Date
            switch observed {
            case .unknown:
                if case .ifMatch = options.condition, let hint = matchedHint {
                    condition = .ifMatch(etag: hint.objectETag)
                    created = hint.created
                } else if options.condition == .none, let hint = hint(identifier), hint.expires.map({ $0 > now }) ?? true {
                    condition = .ifMatch(etag: hint.objectETag)
                    created = hint.created
                } else {
                    condition = .ifNoneMatchAny
                    created = now
                }
            case .absent:
                if case .ifMatch(let expected) = options.condition {
                    throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: expected, actual: nil)
                }
                condition = .ifNoneMatchAny
                created = now
            case .object(let object):
                let live = object.live(at: now)
                switch options.condition {
                case .none:
                    break
                case .ifNoneMatch:
                    if let live { throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: nil, actual: live.etag) }
                    if case .failure(let invalid) = object.metadata { throw foreign(key, invalid) }
                case .ifMatch(let expected):
                    guard let live, live.etag == expected else {
                        throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: expected, actual: live?.etag)
                    }
                }
                condition = .ifMatch(etag: object.objectETag)
                created = live?.created ?? now
            }
            if options.condition == .none, attempt == Self.maximumPutAttempts - 1 { condition = nil }
            let metadata = BlobMetadata(
                identifier: identifier, size: content.size, contentType: content.contentType, etag: content.etag, created: created,
                modified: now, userMetadata: options.userMetadata, image: content.image, expires: expiry(options.expiry, from: now))
            /// Acknowledges the version stored as `objectETag`: remembered, published once.
            func stored(_ objectETag: String) -> BlobMetadata {
                remember(identifier, object: objectETag, metadata)
                state.withLock { state in
                    let own = S3StoreState.OwnWrite(identifier: Array(identifier.utf8), objectETag: objectETag)
                    if let echoed = state.echoedWrites[own] {
                        // The bucket's echo came first and was published: this PUT publishes nothing more.
                        state.echoedWrites[own] = echoed > 1 ? echoed - 1 : nil
                        return
                    }
                    state.ownWrites[own] = (state.ownWrites[own] ?? 0) + 1
                    state.publish(.put(metadata), store: name, date: now)
                }
                return metadata
            }
            switch try putObject(key: key, content: content, metadata: metadata, condition: condition) {
            case .stored(let objectETag):
                return stored(objectETag)
            case .conditionFailed(let error):
                lastRefusal = error
            }
            // 412: someone else's version is there (or none is); look, and decide again.
            observed = try headObject(key: key, identifier: identifier).map(Observed.object) ?? .absent
        }
        throw BlobStoreError.backendUnavailable(
            store: name, backend: backendDescription,
            reason: "PutObject \(objectURI(key)): \(Self.maximumPutAttempts) conditional PUTs in a row lost the race with other writers "
                + "of this key (each found a newer version than the one it read); nothing was stored by this put; the last answer: "
                + (lastRefusal?.description ?? "none"))
    }

    /// Whether the hint lets an `.ifMatch` put skip its HEAD: it names the expected ETag and has not expired.
    private func hintMatches(_ hint: S3StoreState.Hint, _ condition: WriteCondition) -> Bool {
        guard case .ifMatch(let expected) = condition else { return false }
        return hint.etag == expected && (hint.expires.map { $0 > now() } ?? true)
    }

    /// When a version put at `now` expires (S3 stores have no default time to live).
    private func expiry(_ expiry: BlobExpiry, from now: Date) -> Date? {
        switch expiry {
        case .never, .storeDefault: return nil
        case .at(let date): return Date(s3Nanoseconds: date.s3Nanoseconds)
        case .after(let duration):
            let (nanoseconds, overflow) = now.s3Nanoseconds.addingReportingOverflow(duration.clampedNanoseconds)
            return Date(s3Nanoseconds: overflow ? .max : nanoseconds)
        }
    }

    // MARK: - The PUT

    /// One PUT of the content with its metadata header, conditional unless `condition` is `nil`.
    func putObject(key: String, content: S3PreparedContent, metadata: BlobMetadata, condition: S3WriteCondition?) throws -> S3PutOutcome {
        let encoded = S3MetadataHeader.encode(metadata)
        guard encoded.utf8.count <= S3MetadataHeader.maximumEncodedByteCount else {
            throw BlobStoreError.tooLarge(
                what: "metadata of blob '\(metadata.identifier)' encoded as the S3 header x-amz-meta-blob",
                limit: Int64(S3MetadataHeader.maximumEncodedByteCount), actual: Int64(encoded.utf8.count))
        }
        let headers = S3ObjectHeaders(contentType: metadata.contentType, metadata: [S3HeaderField(S3MetadataHeader.name, encoded)])
        switch content.body {
        case .memory(let bytes):
            return try sendPut(key: key, body: .bytes(bytes), headers: headers, condition: condition)
        case .spooled(let file, _):
            return try sendLargeSpooledFile(key: key, file: file, length: content.size, headers: headers, condition: condition)
        }
    }

    /// Sends content spooled to a file (over 8 MiB): one PUT with the body sent from the file with
    /// `sendfile`, or, above ``multipartThreshold``, a multipart upload of the file's parts. A
    /// multipart completion cannot be conditional on the Ceph gateway (it ignores `If-None-Match`
    /// and `If-Match` there), so for those puts the condition is checked with a HEAD just before the
    /// upload: checked, not atomic. A version another writer stores while the parts go up is
    /// replaced unchecked, and the `created` the put carries is the one read before the upload
    /// (docs/SCALE-OUT.md, "Consistency").
    func sendLargeSpooledFile(key: String, file: FileDescriptor, length: Int64, headers: S3ObjectHeaders, condition: S3WriteCondition?) throws -> S3PutOutcome {
        guard length > multipartThreshold else {
            return try sendPut(key: key, body: .fileRegion(file, offset: 0, length: length), headers: headers, condition: condition)
        }
        if let condition {
            let context = client.bucket.context("PutObject", key: key)
            let current = try headObject(key: key, identifier: layout.identifier(store: name, key: key) ?? key)
            let holds: Bool
            switch condition {
            case .ifNoneMatchAny: holds = current == nil
            case .ifMatchAny: holds = current != nil
            case .ifMatch(let etag): holds = current?.objectETag == S3XMLValues.unquotedETag(etag)
            }
            guard holds else { return .conditionFailed(.answered(S3Error(context: context, status: 412, body: [UInt8]()))) }
        }
        do {
            var upload = S3MultipartUpload(client: client, key: key, headers: headers)
            upload.beforePart = beforeMultipartPart
            let objectETag = try upload.upload(file: file, length: length)
            return .stored(objectETag: objectETag)
        } catch {
            throw unavailable(error)
        }
    }

    /// One PutObject with `UNSIGNED-PAYLOAD`, never replayed by the transport (a replay of a
    /// conditional PUT could answer `412` to its own first attempt). Large bodies wait for
    /// `100 Continue`, so a `412` costs no upload.
    private func sendPut(key: String, body: TransportBody, headers: S3ObjectHeaders, condition: S3WriteCondition?) throws -> S3PutOutcome {
        let context = client.bucket.context("PutObject", key: key)
        let request: S3Request
        do {
            request = try client.bucket.putObject(key: key, payload: .unsigned, headers: headers, condition: condition)
        } catch {
            throw unavailable(.refused(error))
        }
        do {
            let response = try client.send(
                request, body: body, context: context, isIdempotent: false, expectsContinue: body.length > 1 << 20, responseLimit: 1 << 20)
            guard let etag = response.headers.first(name: "etag").map({ S3XMLValues.unquotedETag(String($0.trimmingSpaces())) }),
                !etag.isEmpty
            else { throw unavailable(context, reason: "PutObject answered without an ETag") }
            return .stored(objectETag: etag)
        } catch let error as S3ClientError {
            // 412: the condition did not hold. A conditional PUT that lost a race inside the Ceph
            // gateway (RADOS answered ECANCELED) comes back as `500 UnknownError`; nothing was
            // stored, so it is looked at again like a 412 (the retry is conditional too, so a
            // write is never applied twice).
            if error.status == 412 || error.status == 500 && error.code == "UnknownError" { return .conditionFailed(error) }
            throw unavailable(error)
        }
    }
}

/// What one conditional PUT did.
enum S3PutOutcome: Sendable {
    /// The object was stored; S3's ETag of it, unquoted.
    case stored(objectETag: String)
    /// The condition did not hold (`412`), or the gateway could not confirm it against a
    /// concurrent writer (Ceph's `500 UnknownError`); nothing was stored.
    case conditionFailed(S3ClientError)
}
