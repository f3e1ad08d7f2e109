internal import BlobSystem
public import BlobStore
public import Foundation

/// A blob version opened for reading: its metadata, S3's ETag of it, the bytes being read and their reader.
struct S3OpenedContent: Sendable {
    var metadata: BlobMetadata
    var objectETag: String
    var range: Range<Int64>
    var reader: S3ObjectContentReader
}

extension S3BlobStore {
    /// Content of one version up to this size is read whole when a stream is made (the connection
    /// goes back to the pool at once); larger content is read as the stream is consumed.
    static let streamInMemoryLimit: Int64 = 1 << 20

    /// GETs `identifier` (`range` of it, or all), or `nil` when its object ETag is still
    /// `ifNoneMatch`. Throws `notFound` (absent or expired), `corrupt` (a foreign object),
    /// `rangeNotSatisfiable`, or `backendUnavailable`. Blocking.
    func openContent(_ identifier: String, range: Range<Int64>?, ifNoneMatch: String? = nil) throws -> S3OpenedContent? {
        let key = try key(for: identifier)
        let context = client.bucket.context("GetObject", key: key)
        if let range, range.isEmpty || range.lowerBound < 0 {
            // Nothing to GET: the blob's size decides whether the empty range fits.
            let (metadata, objectETag) = try headBlob(identifier)
            let clamped = try ContentInspection.clamp(range, size: metadata.size, store: name, identifier: identifier)
            let reader = S3ObjectContentReader(
                response: nil, skip: 0, count: 0, checks: false, expected: metadata.etag, store: self, key: key, context: context)
            return S3OpenedContent(metadata: metadata, objectETag: objectETag, range: clamped, reader: reader)
        }
        let byteRange = range.map { range -> S3ByteRange in
            range.upperBound == .max ? .from(first: range.lowerBound) : .bounded(first: range.lowerBound, last: range.upperBound - 1)
        }
        let response: TransportResponse
        do {
            response = try client.start(try client.bucket.getObject(key: key, range: byteRange, ifNoneMatch: ifNoneMatch), context: context)
        } catch let error as S3RequestError {
            throw unavailable(.refused(error))
        } catch let error as S3ClientError {
            throw unavailable(error)
        }
        switch response.status.code {
        case 200, 206:
            let ranged = response.status.code == 206
            let object: S3FoundObject
            do {
                object = try found(response.headers, key: key, identifier: identifier, context: context, ranged: ranged).0
            } catch {
                response.close()
                throw error
            }
            guard case .success(let metadata) = object.metadata else {
                response.close()
                if case .failure(let invalid) = object.metadata { throw foreign(key, invalid) }
                throw BlobStoreError.notFound(store: name, identifier: identifier)
            }
            guard object.live(at: now()) != nil else {
                response.close()
                throw BlobStoreError.notFound(store: name, identifier: identifier)
            }
            let clamped: Range<Int64>
            do {
                clamped = try range.map { try ContentInspection.clamp($0, size: metadata.size, store: name, identifier: identifier) } ?? 0..<metadata.size
            } catch {
                response.close()
                throw error
            }
            let skip = ranged ? 0 : clamped.lowerBound
            let whole = clamped == 0..<metadata.size
            let reader = S3ObjectContentReader(
                response: response, skip: skip, count: clamped.length, checks: whole,
                expected: metadata.etag, store: self, key: key, context: context)
            return S3OpenedContent(metadata: metadata, objectETag: object.objectETag, range: clamped, reader: reader)
        case 304:
            response.discard()
            return nil
        case 416:
            response.discard()
            let (metadata, _) = try headBlob(identifier)
            throw BlobStoreError.rangeNotSatisfiable(store: name, identifier: identifier, size: metadata.size)
        default:
            let error = client.fail(response, context: context)
            if Self.isMissingKey(error) {
                forget(identifier)
                throw BlobStoreError.notFound(store: name, identifier: identifier)
            }
            throw unavailable(error)
        }
    }

    /// The whole content and metadata of `identifier`, checked. Blocking.
    func readBlob(_ identifier: String) throws -> (metadata: BlobMetadata, content: Data) {
        guard let opened = try openContent(identifier, range: nil) else { throw BlobStoreError.notFound(store: name, identifier: identifier) }
        return (opened.metadata, try opened.reader.readAll(expectedCount: opened.range.length))
    }

    // MARK: - BlobStoring

    /// The whole content of a blob, checked against its XXH64 ETag (a mismatch is
    /// ``BlobStoreError/corrupt(path:reason:)`` naming `s3://BUCKET/KEY`).
    public func get(_ identifier: String) async throws -> Data {
        try await BlockingThreads.run { try self.readBlob(identifier).content }
    }

    /// The bytes `range` of a blob (clamped at its end), with a ranged GET.
    public func get(_ identifier: String, range: Range<Int64>) async throws -> Data {
        try await BlockingThreads.run {
            guard let opened = try self.openContent(identifier, range: range) else {
                throw BlobStoreError.notFound(store: self.name, identifier: identifier)
            }
            return try opened.reader.readAll(expectedCount: opened.range.length)
        }
    }

    /// The content as chunks, from the version current when the stream is made (one GET, read on
    /// transport threads as the stream is consumed; up to 1 MiB is read at once).
    public func stream(_ identifier: String, range: Range<Int64>?, chunkSize: Int) async throws -> BlobByteStream {
        let step = max(1, chunkSize)
        let opened = try await BlockingThreads.run { () throws -> (S3OpenedContent, Data?) in
            guard let opened = try self.openContent(identifier, range: range) else {
                throw BlobStoreError.notFound(store: self.name, identifier: identifier)
            }
            guard opened.range.length <= Self.streamInMemoryLimit else { return (opened, nil) }
            return (opened, try opened.reader.readAll(expectedCount: opened.range.length))
        }
        let (content, held) = opened
        if let held {
            let position = Locked(0)
            return BlobByteStream(metadata: content.metadata, range: content.range) {
                position.withLock { offset -> Data? in
                    guard offset < held.count else { return nil }
                    let next = min(offset + step, held.count)
                    defer { offset = next }
                    return held.subdata(in: offset..<next)
                }
            }
        }
        let reader = content.reader
        return BlobByteStream(metadata: content.metadata, range: content.range) {
            try await BlockingThreads.run { () throws -> Data? in
                var chunk = Data(count: step)
                var filled = 0
                try chunk.withUnsafeMutableBytes { raw in
                    while filled < raw.count {
                        let count = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                        if count == 0 { break }
                        filled += count
                    }
                }
                return filled == 0 ? nil : chunk.prefix(filled)
            }
        }
    }

    /// Writes the content to a temporary file beside `fileURL`, checked, synced, then renamed over it.
    public func download(_ identifier: String, to fileURL: URL) async throws -> BlobMetadata {
        try await BlockingThreads.run {
            guard let opened = try self.openContent(identifier, range: nil) else {
                throw BlobStoreError.notFound(store: self.name, identifier: identifier)
            }
            defer { opened.reader.close() }
            let target = fileURL.path
            let temporary = fileURL.deletingLastPathComponent()
                .appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString).download").path
            let descriptor: FileDescriptor
            do throws(Errno) {
                descriptor = try FileDescriptor.open(temporary, [.writeOnly, .create, .exclusive], permissions: 0o644)
            } catch {
                throw BlobStoreError.io(operation: "create", path: temporary, errno: error)
            }
            do {
                try descriptor.closeAfter {
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
                    defer { buffer.deallocate() }
                    while true {
                        let count = try opened.reader.read(into: buffer)
                        if count == 0 { break }
                        do throws(Errno) {
                            try descriptor.writeAll(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                        } catch {
                            throw BlobStoreError.io(operation: "write", path: temporary, errno: error)
                        }
                    }
                    do throws(Errno) { try descriptor.sync() } catch { throw BlobStoreError.io(operation: "fsync", path: temporary, errno: error) }
                }
                do throws(Errno) { try FileSystem.rename(temporary, to: target) } catch {
                    throw BlobStoreError.io(operation: "rename", path: target, errno: error)
                }
            } catch {
                _ = try? FileSystem.unlinkIfExists(temporary)
                throw error
            }
            return opened.metadata
        }
    }

    /// The metadata of a blob (HEAD); throws `notFound`.
    public func head(_ identifier: String) async throws -> BlobMetadata {
        try await BlockingThreads.run { try self.headBlob(identifier).metadata }
    }

    /// Whether a blob exists (HEAD); a foreign object at its key is an error, as for ``head(_:)``.
    public func exists(_ identifier: String) async throws -> Bool {
        try await BlockingThreads.run {
            do {
                _ = try self.headBlob(identifier)
                return true
            } catch BlobStoreError.notFound {
                return false
            }
        }
    }
}

extension S3BlobStore: S3ConditionalReading {
    package func fetch(_ identifier: String, ifNoneMatch objectETag: String?) throws -> S3Fetch {
        guard let opened = try openContent(identifier, range: nil, ifNoneMatch: objectETag) else { return .notModified }
        return .fetched(S3StoredVersion(metadata: opened.metadata, objectETag: opened.objectETag), opened.reader)
    }
}

extension Range<Int64> {
    /// The number of bytes in the range.
    var length: Int64 { upperBound - lowerBound }
}
