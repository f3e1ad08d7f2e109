internal import BlobSystem
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Fast path: reads served on the caller's thread when the kernel's caches hold everything they need,
/// skipping the hand-off to the store queue and back (two thread wake-ups, several times a cached
/// small read). STORAGE.md, "Reading", says why this is consistent; `blob-bench get` measures it.
///
/// Removable on its own: without this file and ``StoreCore/cachedReads`` every read goes through the
/// queue, which gives the same answers (``StoreConfiguration/inlineCachedReads`` `false` does that
/// at run time).
///
/// Owned by the store's engine. Its state is ``works`` (atomic) and the index's published copy of the
/// map (its own mutex): any thread may call it, the Swift concurrency pool included, since nothing
/// here blocks.
final class CachedReads: Sendable {
    /// The largest blob ``content(of:)`` copies on the caller's thread: beyond this the copy itself
    /// costs far more than the hand-off to the queue it saves.
    static let largestInlineRead: Int64 = 1 << 20

    private let paths: StorePaths
    private let store: String
    /// The index's copy of its map, replaced in the barrier that changes the map (``BucketIndex/published``).
    private let map: Locked<BucketMap>
    /// Cleared for good when this kernel, filesystem or file owner refuses cache-only reads, so reads
    /// stop trying them.
    let works = AtomicFlag(true)
    /// Cache mode: an expired version is left to the queue (which answers not found); reads mark recency.
    private let marks: ReadMarks

    init(paths: StorePaths, store: String, map: Locked<BucketMap>, marks: ReadMarks) {
        self.marks = marks
        self.paths = paths
        self.store = store
        self.map = map
    }

    /// Opens the current version of `identifier` and reads its header and up to `readLength` bytes
    /// without waiting for the disk or for a commit: every path component must be in the kernel's
    /// lookup cache and the header's pages in its page cache. `nil` whenever that is not so, and
    /// also when no file is there or it cannot be decoded: the caller then reads on the queue, which
    /// gives the authoritative answer (and the error to report).
    ///
    /// Why this needs neither the queue nor the current map: every change to the bucket tree is one
    /// rename or unlink (a put replaces the file in place, a split moves it to another bucket, a remove
    /// unlinks it, a remove-all moves the whole tree to the trash), so at every instant at most one
    /// file in the tree has a header naming `identifier`, and it is that blob's current version. A path from a stale map
    /// can only miss (a split or remove-all moved the file), and a miss falls back to the queue. The
    /// read is therefore linearised at the open, like a read on the queue, and the descriptor pins
    /// that version as always. A put is visible here from its rename, exactly as to queued reads.
    func open(_ identifier: String, readLength: Int) -> OpenedBlob? {
        guard works.load(ordering: .relaxed) else { return nil }
        let bucket = map.withLock { $0.buckets[$0.index(for: identifier.utf8)].number }
        let path = paths.file(of: identifier, inBucket: bucket)
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.openIfCached(path, [.readOnly, .noFollow, .noAccessTime])
        } catch {
            noteRefusal(error)
            return nil
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(readLength, 4096), alignment: 16)
        defer { buffer.deallocate() }
        let count: Int
        do {
            count = try fd.readIfCached(fromAbsoluteOffset: 0, into: buffer)
        } catch {
            try? fd.close()
            noteRefusal(error)
            return nil
        }
        let decoded = Result { () throws(BlobHeader.DecodeError) in try BlobHeader.decode(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
        guard case .success(let header) = decoded, header.identifier == identifier, !marks.expired(header) else {
            try? fd.close()
            return nil
        }
        marks.read(identifier)
        return OpenedBlob(
            descriptor: fd, header: header, path: path, store: store, firstBytes: UnsafeRawBufferPointer(rebasing: buffer[..<count]),
            reachedEnd: count < buffer.count)
    }

    /// The whole content of `identifier` (up to ``largestInlineRead``) and the header it was checked
    /// against, when it can be read without waiting (see ``open(_:readLength:)``) and passes its check
    /// (``ContentCheck``); `nil` means: read it on the queue, which gives the authoritative answer or error.
    func content(of identifier: String) -> (header: BlobHeader, content: Data)? {
        guard let blob = open(identifier, readLength: BlobReader.initialReadLength) else { return nil }
        defer { try? blob.descriptor.close() }
        return wholeContent(of: blob).map { (blob.header, $0) }
    }

    /// The whole checked content of the opened `blob` (up to ``largestInlineRead``), read with
    /// calls that never wait; `nil` when some of it is not in the page cache, or it fails its check.
    /// Leaves the descriptor open.
    func wholeContent(of blob: OpenedBlob) -> Data? {
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
        guard size <= CachedReads.largestInlineRead, blob.fileEnd == nil else { return nil }
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
    /// with `O_NOATIME` (`EPERM`; queued reads fall back to a plain open).
    private func noteRefusal(_ error: Errno) {
        switch error.rawValue {
        case ENOSYS, EINVAL, EOPNOTSUPP, EPERM: works.store(false, ordering: .relaxed)
        default: break
        }
    }
}
