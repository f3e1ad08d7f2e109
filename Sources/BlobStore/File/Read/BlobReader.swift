internal import BlobSystem
import Foundation

/// Reads blob files: opens one for its header and first bytes, or decodes a header alone.
///
/// It knows nothing of buckets, maps or queues: its callers say which file to read, so the same reads
/// serve gets on the store queue, commits inside the barrier, listings and verify. Immutable.
struct BlobReader: Sendable {
    /// The store's name, for errors.
    let store: String

    /// How much a read asks for first: enough for any header and a small blob in one `pread`.
    static let initialReadLength = 64 * 1024

    /// Opens the blob stored at `path` under `identifier`, reading the header and up to `readLength` bytes.
    /// Returns `nil` if there is none (or the file there belongs to another identifier with the same hashed name).
    func open(at path: String, identifier: String, readLength: Int = BlobReader.initialReadLength) throws -> OpenedBlob? {
        let fd: FileDescriptor
        do {
            fd = try BlobReader.openForReading(path)
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
                guard BlobReader.fileName(of: path, fits: header.identifier) else {
                    throw BlobReader.misplaced(path: path, holding: header.identifier, for: identifier)
                }
                try? fd.close()
                return nil
            }
            return OpenedBlob(
                descriptor: fd, header: header, path: path, store: store, firstBytes: UnsafeRawBufferPointer(rebasing: buffer[..<count]),
                reachedEnd: count < buffer.count)
        } catch {
            try? fd.close()
            throw error
        }
    }

    /// Reads the content bytes `range` (already clamped) of an opened blob, checked: the whole
    /// content is read and hashed (for a part too), and a blob that fails ``ContentCheck`` throws
    /// `corrupt` instead of answering.
    func content(of blob: OpenedBlob, range: Range<Int64>) throws -> Data {
        var check = blob.contentCheck()
        return try check.read(range, leading: blob.leadingContent, fileEnd: blob.fileEnd, descriptor: blob.descriptor)
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

    /// Opens a blob file to read it without updating its access time: under `relatime` the first
    /// read of every new blob would otherwise write its inode back. Falls back to a plain open when
    /// the store's files belong to another user (`EPERM`).
    static func openForReading(_ path: String) throws(Errno) -> FileDescriptor {
        do {
            return try FileDescriptor.open(path, [.readOnly, .noFollow, .noAccessTime])
        } catch .notPermitted {
            return try FileDescriptor.open(path, [.readOnly, .noFollow])
        }
    }

    /// Reads just the header at `path`, for commits and listings.
    ///
    /// One `pread` into a stack buffer: a regular file returns everything up to its end, so a header
    /// (and a small blob) arrives whole, where `readFully` would spend a second call to learn it is at
    /// the end and a zeroed array per call an allocation. Listing a page reads a thousand headers.
    ///
    /// Only `ENOENT` means absent. Any other failure to open or read (`ELOOP`, `EACCES`, `EIO`,
    /// `ENOTCONN` from a dead mount, `ENOTDIR` where a bucket folder should be) throws
    /// ``BlobStoreError/io(operation:path:errno:)``: the file may well still be there, and a remove
    /// or a conditional put must not act as if it were not.
    ///
    /// A file whose header names an identifier that does not belong under its file name (a misplaced
    /// or copied file) is `damaged`, so a put replaces it and a remove removes it, unless
    /// `anyName` (verify, which reports it as misplaced).
    static func existing(at path: String, anyName: Bool = false) throws -> ExistingBlob {
        let found = try decoded(at: path)
        if !anyName, case .present(let header) = found, !fileName(of: path, fits: header.identifier) { return .damaged }
        return found
    }

    private static func decoded(at path: String) throws -> ExistingBlob {
        let fd: FileDescriptor
        do { fd = try openForReading(path) } catch .noSuchFileOrDirectory { return .absent } catch {
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
}
