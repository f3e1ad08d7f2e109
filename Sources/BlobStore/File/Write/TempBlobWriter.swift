internal import BlobSystem
import Foundation

/// A put's content on its way to disk: written to a temp file outside the store's barrier, with the
/// checksum computed as it goes, so the commit only has to rename.
///
/// Small blobs stay in memory until ``finish()`` and are written with their final header in one
/// `write`; larger ones get a header with placeholder size and checksum that is rewritten at the end.
/// Owned by one task at a time: its methods are called one after another, never concurrently.
final class TempBlobWriter: @unchecked Sendable {
    let core: StoreCore
    let identifier: String
    let options: PutOptions
    let durable: Bool
    let maximumSize: Int64

    private var hasher = XXH64()
    private var size: Int64 = 0
    private var pendingBytes: [UInt8] = []
    private var header: BlobHeader?
    /// The file once content outgrows memory (or at ``finish()``); handed to the ``PreparedPut`` then.
    private var file: TempFile?
    /// Checks the content as an image while it streams by (see ``ImageValidator``).
    private let image = ImageValidator()
    /// The temp file's path (see ``TempFile/path``).
    let tempPath: String
    /// The version's time, by the store's clock (``StoreClock``).
    private let modified: Int64
    /// When the version expires (``BlobExpiry``, settled from the store's policy now), or `nil`.
    private let expires: Int64?

    /// Checks a write condition early (a conditional put that cannot succeed fails before its content
    /// is written; the commit checks again atomically). Blocking: call off the concurrency pool.
    ///
    /// An unconditional put looks nothing up here: the commit finds what it replaces anyway (and
    /// carries the old version's `created` over), and every lookup here is a read on the store's
    /// queue that would wait for any commit in progress.
    init(core: StoreCore, identifier: String, options: PutOptions, durable: Bool, maximumSize: Int64) throws {
        try core.refuseIfReadOnly("put")  // before any temp file is made in a store this engine must not write
        self.core = core
        self.identifier = identifier
        self.options = options
        self.durable = durable
        self.maximumSize = maximumSize
        modified = core.cache.clock.nowNanoseconds()
        expires = try core.cache.expiry(of: options.expiry, from: modified)
        tempPath = core.paths.temp + "/" + StorePaths.uniqueName("put-")
        if options.condition != .none {
            let now = modified
            let existing = try core.queue.sync { try BlobReader.existing(at: core.index.location(of: identifier).path) }.unexpired(atNanoseconds: now)
            try options.condition.check(against: existing, store: core.name, identifier: identifier)
        }
    }

    /// A writer dropped without ``finish()``, ``discard()`` or ``abandon()`` (a caller's bug, or a
    /// path that failed between them) still removes its file. In the background: freeing blocks may
    /// wait for the disk, and the last release may happen on any thread.
    deinit {
        guard let file else { return }
        core.reclaimQueue.async { file.drop() }
    }

    /// Adds content. Blocking.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        size += Int64(bytes.count)
        if size > maximumSize {
            throw BlobStoreError.tooLarge(what: "blob '\(BlobStoreError.abbreviated(identifier))'", limit: maximumSize, actual: size)
        }
        hasher.update(bytes)
        image.append(bytes)
        if header == nil {
            pendingBytes.append(contentsOf: bytes)
            if pendingBytes.count > ImageHeaderParser.recommendedPrefixLength {
                try startFile()  // refuses what is already no image, when asked to validate one
            }
        } else {
            // A large upload that is no image is refused as soon as that shows, not after all of it.
            if options.validation == .image, let failure = image.failure {
                throw BlobStoreError.notAnImage(store: core.name, identifier: identifier, reason: failure.reason)
            }
            try write(bytes)
        }
    }

    /// Finishes the temp file and returns what the commit needs (the committer syncs durable ones, batched). Blocking.
    ///
    /// `created` is written as the modification time, right for a new blob; a commit that replaces
    /// one rewrites it to the old version's before the content is synced and renamed.
    func finish() throws -> PreparedPut {
        let created = modified
        if var header {
            header.size = size
            header.checksum = hasher.finalize()
            header.createdNanoseconds = created
            if options.validation == .record {
                try validateRecordFromFile()
            }
            // The header was laid out from the first bytes; the verdict on all of them may change its length.
            let written = header.encodedLength
            let final = try inspect(verdict: try imageVerdict(), complete: false)
            (header.contentType, header.image) = (final.contentType, final.image)
            if header.encodedLength != written { try moveContent(from: written, to: header.encodedLength) }
            let bytes = header.encoded()
            try io("write", tempPath) {
                try bytes.withUnsafeBytes { raw in try file!.descriptor!.writeAll(toAbsoluteOffset: 0, raw) }
            }
            self.header = header
        } else {
            var header = try inspect(verdict: try imageVerdict(), complete: true)
            header.size = size
            header.checksum = hasher.finalize()
            header.createdNanoseconds = created
            var bytes: [UInt8] = []
            bytes.reserveCapacity(header.encodedLength + pendingBytes.count)
            header.encode(into: &bytes)
            bytes += pendingBytes
            pendingBytes = []
            try openFile()
            try bytes.withUnsafeBytes { try write($0) }
            self.header = header
        }
        try io("close", tempPath) { try file!.written() }
        let prepared = PreparedPut(identifier: identifier, temp: file!, header: header!, condition: options.condition, durable: durable)
        file = nil  // the prepared put owns it now
        return prepared
    }

    /// Drops the temp file now (blocking), so a caller can report the failure once the file is gone:
    /// a process that exits right after a failed put leaves nothing behind. Safe to call at any point
    /// before ``finish()`` succeeds, also after it failed.
    func discard() {
        file?.drop()
        file = nil
    }

    /// Drops the temp file in the background (for threads that must not block on an unlink, such as a
    /// server's event loops). Safe to call at any point before ``finish()`` succeeds, also after it failed.
    func abandon() {
        guard let file else { return }
        self.file = nil
        core.reclaimQueue.async { file.drop() }
    }

    /// `complete` tells whether ``pendingBytes`` is all of the content; if not, record validation waits for ``finish()``.
    private func inspect(verdict: Result<ImageInfo, ImageParseFailure>, complete: Bool) throws -> BlobHeader {
        var inspectOptions = options
        if !complete, options.validation == .record { inspectOptions.validation = .none }
        let (contentType, image) = try ContentInspection.inspect(
            store: core.name, identifier: identifier, options: inspectOptions, image: verdict, size: size,
            wholeContent: { Data(pendingBytes) })
        let type = options.validation == .record ? (options.contentType ?? "application/json") : contentType
        return BlobHeader(
            identifier: identifier, size: 0, checksum: 0, createdNanoseconds: modified, modifiedNanoseconds: modified,
            contentType: type, userMetadata: options.userMetadata, image: image, expiresNanoseconds: expires)
    }

    /// The content has outgrown memory: fix the header layout from the first bytes and start the file.
    private func startFile() throws {
        let header = try inspect(verdict: ContentInspection.provisionalVerdict(image), complete: false)
        self.header = header
        try openFile()
        try header.encoded().withUnsafeBytes { try write($0) }
        try pendingBytes.withUnsafeBytes { try write($0) }
        pendingBytes = []
    }

    /// The image verdict on the whole content; formats that need random access read the temp file back.
    private func imageVerdict() throws -> Result<ImageInfo, ImageParseFailure> {
        guard let header else {
            return try pendingBytes.withUnsafeBytes { bytes in
                try image.finish { offset, buffer in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + buffer.count]))
                }
            }
        }
        let start = Int64(header.encodedLength)
        return try image.finish { offset, buffer in
            let count = try io("read", tempPath) {
                try file!.descriptor!.readFully(fromAbsoluteOffset: start + Int64(offset), into: buffer)
            }
            if count < buffer.count { throw BlobStoreError.io(operation: "read", path: tempPath, errno: Errno(rawValue: EIO)) }
        }
    }

    /// Moves the content to start at `new` instead of `old` (the header's length changed), in bounded memory.
    /// Rare: only a large blob whose default content type changed with the verdict (an image's signature,
    /// but not a valid image) gets here.
    private func moveContent(from old: Int, to new: Int) throws {
        let descriptor = file!.descriptor!
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var moved: Int64 = 0
        while moved < size {
            let count = Int(min(Int64(buffer.count), size - moved))
            // Moving towards the end, copy from the end, so no write lands on bytes not yet copied.
            let at = new > old ? size - moved - Int64(count) : moved
            let block = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            _ = try io("read", tempPath) { try descriptor.readFully(fromAbsoluteOffset: Int64(old) + at, into: block) }
            try io("write", tempPath) { try descriptor.writeAll(toAbsoluteOffset: Int64(new) + at, UnsafeRawBufferPointer(block)) }
            moved += Int64(count)
        }
        if new < old { try io("truncate", tempPath) { try descriptor.resize(to: Int64(new) + size) } }
    }

    private func validateRecordFromFile() throws {
        if size > RecordValidation.maximumByteCount {
            throw BlobStoreError.tooLarge(what: "record '\(identifier)'", limit: RecordValidation.maximumByteCount, actual: size)
        }
        let offset = Int64(header!.encodedLength)
        var data = Data(count: Int(size))
        _ = try io("read", tempPath) {
            try data.withUnsafeMutableBytes { raw in try file!.descriptor!.readFully(fromAbsoluteOffset: offset, into: raw) }
        }
        if let reason = RecordValidation.violation(in: data) {
            throw BlobStoreError.invalidRecord(store: core.name, identifier: identifier, reason: reason)
        }
    }

    /// Creates the temp file.
    private func openFile() throws {
        let path = tempPath
        file = try io("create temp file", path) { try TempFile.create(at: path) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        try io("write", tempPath) { try file!.descriptor!.writeAll(bytes) }
    }
}

/// A put whose temp file is complete and waits for its commit.
struct PreparedPut: Sendable {
    var identifier: String
    /// Owned by the put: the commit publishes it or drops it.
    var temp: TempFile
    var header: BlobHeader
    var condition: WriteCondition
    var durable: Bool
    /// Whether the committer has synced the content already (a relaxed put known to replace a blob
    /// before its barrier), so the barrier need not.
    var contentSynced = false

    /// The temp file's path: a durable put's file is synced and logged by it (see ``TempFile/path``).
    var tempPath: String { temp.path }

    /// Unlinks the temp file now (blocking) if it is still there, so a failure is reported once the
    /// file is gone.
    func removeTempFileIfLeft() {
        _ = try? FileSystem.unlinkIfExists(temp.path)
    }
}
