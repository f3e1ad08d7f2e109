internal import BlobSystem
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A blob file opened for reading: the descriptor pins one version even if a put replaces it.
struct OpenedBlob {
    let descriptor: FileDescriptor
    let header: BlobHeader
    let headerLength: Int
    let path: String
    /// The store it belongs to (named in errors).
    let store: String
    /// Content bytes that came with the header read (possibly the whole blob).
    let leadingContent: Data
    /// The file's length when the first read reached its end (it returned less than it asked for,
    /// which a regular file does only at its end) after all the content; `nil` when the file goes on,
    /// or when the read stopped inside the content: a short read is then confirmed by reading on
    /// (`readFully`) before the file is called short, in case a filesystem returned less than it had.
    let fileEnd: Int64?

    /// The blob whose `header` was decoded from `firstBytes`, the start of its file as read at
    /// `path`; keeps the content bytes that came with the header (possibly the whole blob).
    /// `reachedEnd`: the read that gave `firstBytes` stopped at the end of the file.
    init(descriptor: FileDescriptor, header: BlobHeader, path: String, store: String, firstBytes: UnsafeRawBufferPointer, reachedEnd: Bool) {
        self.descriptor = descriptor
        self.header = header
        self.path = path
        self.store = store
        headerLength = header.encodedLength
        let available = Int(min(Int64(firstBytes.count - headerLength), header.size))
        leadingContent = Data(bytes: firstBytes.baseAddress! + headerLength, count: max(0, available))
        fileEnd = reachedEnd && Int64(firstBytes.count) >= Int64(headerLength) + header.size ? Int64(firstBytes.count) : nil
    }

    /// A check of this version's content against its header, nothing read yet.
    func contentCheck() -> ContentCheck { ContentCheck(self) }
}

/// What a commit found at a blob's path.
enum ExistingBlob {
    case absent
    case present(BlobHeader)
    /// A file is there but its header does not decode; it is replaced or removed like a blob.
    case damaged
}

extension StoreCore {
    /// How much a read asks for first: enough for any header and a small blob in one `pread`.
    static let initialReadLength = 64 * 1024

    /// Opens the blob stored at `path` under `identifier`, reading the header and up to `readLength` bytes.
    /// Returns `nil` if there is none (or the file there belongs to another identifier with the same hashed name).
    func openBlob(at path: String, identifier: String, readLength: Int = StoreCore.initialReadLength) throws -> OpenedBlob? {
        let fd: FileDescriptor
        do {
            fd = try StoreCore.openForReading(path)
        } catch .noSuchFileOrDirectory {
            return nil
        } catch {
            throw BlobStoreError.io(operation: "open", path: path, errno: error)
        }
        // An uninitialised buffer: zero-filling 64 KiB per read would cost more than the read.
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(readLength, 4096), alignment: 16)
        defer { buffer.deallocate() }
        do {
            // One `pread`: a regular file returns everything up to its end, so a small blob arrives
            // whole; `readFully` would spend a second call to learn it is at the end.
            var count = try io("read", path) { try fd.read(fromAbsoluteOffset: 0, into: buffer) }
            var header: BlobHeader
            while true {
                let decoded = Result { () throws(BlobHeader.DecodeError) in
                    try BlobHeader.decode(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                }
                switch decoded {
                case .success(let decodedHeader):
                    header = decodedHeader
                case .failure(.truncated(let needed)) where needed > count && count == buffer.count:
                    let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: needed, alignment: 16)
                    larger.copyMemory(from: UnsafeRawBufferPointer(buffer))
                    buffer.deallocate()
                    buffer = larger
                    count += try io("read", path) {
                        try fd.readFully(fromAbsoluteOffset: Int64(count), into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
                    }
                    continue
                case .failure(.truncated) where count < buffer.count:
                    // A short read that did not reach the end (allowed by POSIX): read the rest before judging.
                    let more = try io("read", path) {
                        try fd.readFully(fromAbsoluteOffset: Int64(count), into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
                    }
                    if more == 0 { throw BlobStoreError.corrupt(path: path, reason: "file ends inside its header") }
                    count += more
                    continue
                case .failure(.truncated):
                    throw BlobStoreError.corrupt(path: path, reason: "file ends inside its header")
                case .failure(.invalid(let reason)):
                    throw BlobStoreError.corrupt(path: path, reason: reason)
                }
                break
            }
            guard header.identifier == identifier else {
                // A hash collision: the file is another blob's, under the name both long identifiers
                // map to, so ours is absent. Any other identifier does not belong under this name: a
                // misplaced or copied file, which is damage, not absence (DELETE or PUT replace it).
                guard StoreCore.fileName(of: path, fits: header.identifier) else { throw StoreCore.misplaced(path: path, holding: header.identifier, for: identifier) }
                try? fd.close()
                return nil
            }
            return OpenedBlob(
                descriptor: fd, header: header, path: path, store: name, firstBytes: UnsafeRawBufferPointer(rebasing: buffer[..<count]),
                reachedEnd: count < buffer.count)
        } catch {
            try? fd.close()
            throw error
        }
    }

    /// Whether the last component of `path` is the file name of `identifier` (where its blob belongs).
    static func fileName(of path: String, fits identifier: String) -> Bool {
        let utf8 = path.utf8
        let start = utf8.lastIndex(of: UInt8(ascii: "/")).map { utf8.index(after: $0) } ?? utf8.startIndex
        return utf8[start...].elementsEqual(FileNameCoding.name(for: identifier).utf8)
    }

    /// The error for a file at `identifier`'s path whose header names `other`, whose file name is a different one.
    static func misplaced(path: String, holding other: String, for identifier: String) -> BlobStoreError {
        .corrupt(
            path: path,
            reason: "the file under the name of blob '\(BlobStoreError.abbreviated(identifier))' holds blob '\(BlobStoreError.abbreviated(other))', which belongs under another name (a misplaced or copied file; DELETE removes it, PUT replaces it)")
    }

    /// Opens a blob file to read it without updating its access time: the first read of every new
    /// blob would otherwise write its inode back (684 MiB of writes while listing a million blobs).
    /// Falls back to a plain open when the store's files belong to another user (`EPERM`).
    static func openForReading(_ path: String) throws(Errno) -> FileDescriptor {
        do {
            return try FileDescriptor.open(path, [.readOnly, .noFollow, .noAccessTime])
        } catch .notPermitted {
            return try FileDescriptor.open(path, [.readOnly, .noFollow])
        }
    }

    // MARK: - Reads that never wait

    /// The largest blob ``contentIfCached(_:)`` copies on the caller's thread: beyond this the copy
    /// itself costs far more than the hand-off to `queue` it saves.
    static let largestInlineRead: Int64 = 1 << 20

    /// Opens the current version of `identifier` and reads its header and up to `readLength` bytes
    /// without waiting for the disk or for a commit: every path component must be in the kernel's
    /// lookup cache and the header's pages in its page cache. `nil` whenever that is not so, and
    /// also when no file is there or it cannot be decoded: the caller then reads on `queue`, which
    /// gives the authoritative answer (and the error to report). Safe on any thread, including the
    /// Swift concurrency pool, because nothing here blocks.
    ///
    /// Why this needs neither `queue` nor the current map: every change to the bucket tree is one
    /// rename (a put replaces the file in place, a split moves it to another bucket, a remove or a
    /// remove-all moves it to the trash), so at every instant at most one file in the tree has a
    /// header naming `identifier`, and it is that blob's current version. A path from a stale map
    /// can only miss (a split or remove-all moved the file), and a miss falls back to `queue`. The
    /// read is therefore linearised at the open, like a read on `queue`, and the descriptor pins that
    /// version as always. A put is visible here from its rename, exactly as to reads on `queue`.
    func openIfCached(_ identifier: String, readLength: Int) -> OpenedBlob? {
        guard cachedReadsWork.load(ordering: .relaxed) else { return nil }
        let bucket = publishedMap.withLock { $0.buckets[$0.index(for: identifier.utf8)].number }
        let path = path(of: identifier, inBucket: bucket)
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.openIfCached(path, [.readOnly, .noFollow, .noAccessTime])
        } catch {
            noteCachedReadRefusal(error)
            return nil
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(readLength, 4096), alignment: 16)
        defer { buffer.deallocate() }
        let count: Int
        do {
            count = try fd.readIfCached(fromAbsoluteOffset: 0, into: buffer)
        } catch {
            try? fd.close()
            noteCachedReadRefusal(error)
            return nil
        }
        let decoded = Result { () throws(BlobHeader.DecodeError) in try BlobHeader.decode(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
        guard case .success(let header) = decoded, header.identifier == identifier else {
            try? fd.close()
            return nil
        }
        return OpenedBlob(
            descriptor: fd, header: header, path: path, store: name, firstBytes: UnsafeRawBufferPointer(rebasing: buffer[..<count]),
            reachedEnd: count < buffer.count)
    }

    /// The whole content of `identifier` (up to ``largestInlineRead``) when it can be read without
    /// waiting (see ``openIfCached(_:readLength:)``) and passes its check (``ContentCheck``); `nil`
    /// means: read it on `queue`, which gives the authoritative answer or error.
    func contentIfCached(_ identifier: String) -> Data? {
        guard let blob = openIfCached(identifier, readLength: StoreCore.initialReadLength) else { return nil }
        defer { try? blob.descriptor.close() }
        var check = blob.contentCheck()
        let size = blob.header.size
        let end = Int64(blob.headerLength) + size
        if Int64(blob.leadingContent.count) == size {
            check.feed(blob.leadingContent)
            // Where the first read did not reach the file's end, one byte past the content must not exist.
            var fileEnd = blob.fileEnd
            if fileEnd == nil {
                var probe: UInt8 = 0
                guard let beyond = try? withUnsafeMutableBytes(of: &probe, { try blob.descriptor.readIfCached(fromAbsoluteOffset: end, into: $0) })
                else { return nil }
                fileEnd = end + Int64(beyond)
            }
            guard (try? check.finish(fileEnd: fileEnd!)) != nil else { return nil }
            return blob.leadingContent
        }
        guard size <= StoreCore.largestInlineRead, blob.fileEnd == nil else { return nil }
        // One byte more than the content: a file longer than its header says fills it.
        let whole = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(size) + 1, alignment: 16)
        let leading = blob.leadingContent.count
        blob.leadingContent.withUnsafeBytes { whole.copyMemory(from: $0) }
        var filled = leading
        while filled < whole.count {
            let offset = Int64(blob.headerLength + filled)
            guard let count = try? blob.descriptor.readIfCached(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(rebasing: whole[filled...]))
            else {
                whole.deallocate()
                return nil
            }
            filled += count
            // A regular file returns less than asked only at its end.
            if count < whole.count - (filled - count) { break }
        }
        check.feed(UnsafeRawBufferPointer(rebasing: whole[..<min(filled, Int(size))]))
        guard filled == Int(size), (try? check.finish(fileEnd: end)) != nil else {
            whole.deallocate()
            return nil
        }
        return Data(bytesNoCopy: whole.baseAddress!, count: Int(size), deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Stops cache-only reads for good when the failure says they can never work here: no `openat2`
    /// or no `RESOLVE_CACHED` (kernels before 5.12: `ENOSYS`, `EINVAL`), no `RWF_NOWAIT` on this
    /// filesystem (`EOPNOTSUPP`), or the store's files belong to another user, who alone may open them
    /// with `O_NOATIME` (`EPERM`; reads on `queue` fall back to a plain open).
    private func noteCachedReadRefusal(_ error: Errno) {
        switch error.rawValue {
        case ENOSYS, EINVAL, EOPNOTSUPP, EPERM: cachedReadsWork.store(false, ordering: .relaxed)
        default: break
        }
    }

    /// Reads just the header at `path`, for commits and listings.
    ///
    /// One `pread` into a stack buffer: a regular file returns everything up to its end, so a header
    /// (and a small blob) arrives whole; `readFully` spent a second call to learn it was at the end,
    /// and a zeroed array per call cost an allocation. Listing a page reads a thousand headers.
    ///
    /// Only `ENOENT` means absent. Any other failure to open or read (`ELOOP`, `EACCES`, `EIO`,
    /// `ENOTCONN` from a dead mount, `ENOTDIR` where a bucket folder should be) throws
    /// ``BlobStoreError/io(operation:path:errno:)``: the file may well still be there, and a remove
    /// or a conditional put must not act as if it were not.
    ///
    /// A file whose header names an identifier that does not belong under its file name (a misplaced
    /// or copied file) is `damaged`, so a put replaces it and a remove removes it, unless
    /// `anyName` (``verify()``, which reports it as misplaced).
    func existingBlob(at path: String, anyName: Bool = false) throws -> ExistingBlob {
        let found = try decodedBlob(at: path)
        if !anyName, case .present(let header) = found, !StoreCore.fileName(of: path, fits: header.identifier) { return .damaged }
        return found
    }

    private func decodedBlob(at path: String) throws -> ExistingBlob {
        let fd: FileDescriptor
        do { fd = try StoreCore.openForReading(path) } catch .noSuchFileOrDirectory { return .absent } catch {
            throw BlobStoreError.io(operation: "open", path: path, errno: error)
        }
        return try fd.closeAfter { () throws -> ExistingBlob in
            let firstTry = try withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 16) { buffer throws -> ExistingBlob? in
                let count = try io("read", path) { try fd.read(fromAbsoluteOffset: 0, into: buffer) }
                switch Result(catching: { () throws(BlobHeader.DecodeError) in try BlobHeader.decode(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }) {
                case .success(let header): return .present(header)
                case .failure(.truncated): return nil  // a longer header, or a short read: read it whole below
                case .failure(.invalid): return .damaged
                }
            }
            if let firstTry { return firstTry }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var count = try io("read", path) { try buffer.withUnsafeMutableBytes { try fd.readFully(fromAbsoluteOffset: 0, into: $0) } }
            while true {
                let result = buffer.withUnsafeBytes { raw in
                    Result { () throws(BlobHeader.DecodeError) in try BlobHeader.decode(UnsafeRawBufferPointer(rebasing: raw[..<count])) }
                }
                switch result {
                case .success(let header):
                    return .present(header)
                case .failure(.truncated(let needed)) where needed > count && count == buffer.count:
                    buffer += [UInt8](repeating: 0, count: needed - count)
                    let more = try io("read", path) {
                        try buffer.withUnsafeMutableBytes {
                            try fd.readFully(fromAbsoluteOffset: Int64(count), into: UnsafeMutableRawBufferPointer(rebasing: $0[count...]))
                        }
                    }
                    count += more
                case .failure:
                    return .damaged
                }
            }
        }
    }

    /// Runs `body` as a read on `queue` (concurrently with other reads, never during a commit).
    func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        queuedReads.wrappingAdd(1, ordering: .relaxed)
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// The file name and location of `identifier`. Call on `queue`.
    func locate(_ identifier: String) -> (folder: String, path: String, bucketIndex: Int) {
        location(of: Array(identifier.utf8), name: FileNameCoding.name(for: identifier))
    }

    /// Opens the current version of `identifier`, or throws `notFound`. Call on `queue`.
    func openCurrent(_ identifier: String, readLength: Int = StoreCore.initialReadLength) throws -> OpenedBlob {
        guard let blob = try openBlob(at: path(of: identifier), identifier: identifier, readLength: readLength) else {
            throw BlobStoreError.notFound(store: name, identifier: identifier)
        }
        return blob
    }

    /// Reads the content bytes `range` (already clamped) of an opened blob, checked: the whole
    /// content is read and hashed (for a part too), and a blob that fails ``ContentCheck`` throws
    /// `corrupt` instead of answering.
    func content(of blob: OpenedBlob, range: Range<Int64>) throws -> Data {
        var check = blob.contentCheck()
        return try check.read(range, leading: blob.leadingContent, fileEnd: blob.fileEnd, descriptor: blob.descriptor)
    }

    // MARK: - Bucket listing

    /// One blob file in a bucket folder.
    struct BucketEntry: Sendable {
        var identifier: [UInt8]
        var fileName: String
    }

    /// A bucket's sorted entries as of one version of the bucket.
    struct BucketListing: Sendable {
        var bucket: Int
        var version: UInt64
        var entries: [BucketEntry]
    }

    /// The sorted entries of bucket `number` for a listing. A listing reads pages of up to 10,000
    /// from buckets of up to ~8,000 blobs, so consecutive pages mostly fall in one bucket: its entries
    /// are kept from the previous page while the bucket's version is unchanged, instead of reading
    /// and sorting the folder again for every page. Call on `queue`.
    func sortedEntries(ofBucket number: Int) throws -> [BucketEntry] {
        let version = confined.version(ofBucket: number)
        if let cached = listingCache.withLock({ $0 }), cached.bucket == number, cached.version == version {
            return cached.entries
        }
        let entries = try entries(ofBucketFolder: bucketPath(number))
        bucketListings.withLock { $0 += 1 }
        listingCache.withLock { $0 = BucketListing(bucket: number, version: version, entries: entries) }
        return entries
    }

    /// The blobs in bucket folder `folder`, sorted by identifier bytes; hashed names are resolved through their headers.
    func entries(ofBucketFolder folder: String) throws -> [BucketEntry] {
        var result: [BucketEntry] = []
        let names = try io("list folder", folder) { try DirectoryStream.entries(of: folder) }
        for entry in names {
            switch FileNameCoding.decode(entry.name) {
            case .identifier(let id):
                result.append(BucketEntry(identifier: Array(id.utf8), fileName: entry.name))
            case .hashed:
                if case .present(let header) = try existingBlob(at: folder + "/" + entry.name),
                    FileNameCoding.name(for: header.identifier) == entry.name
                {
                    result.append(BucketEntry(identifier: Array(header.identifier.utf8), fileName: entry.name))
                }
            case .foreign:
                continue
            }
        }
        result.sort { $0.identifier.lexicographicallyPrecedes($1.identifier) }
        return result
    }
}
