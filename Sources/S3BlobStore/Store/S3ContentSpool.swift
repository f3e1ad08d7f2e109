internal import BlobSystem
import BlobStore
import Foundation

/// A put's content, checked and ready to send: where its bytes are and what they are.
struct S3PreparedContent: Sendable {
    /// Where the bytes wait.
    enum Body: Sendable {
        /// In memory (at most ``S3BlobStore/memorySpoolLimit``).
        case memory([UInt8])
        /// In an unlinked spool file, from offset 0 (owned by the ``S3ContentSpool`` that made it).
        case spooled(FileDescriptor, path: String)
    }

    var body: Body
    var size: Int64
    var etag: ETag
    var contentType: String
    var image: ImageInfo?
}

/// Gathers a put's content as it arrives: in memory up to ``S3BlobStore/memorySpoolLimit``, then in
/// an unlinked temp file in the store's spool folder, so memory stays bounded whatever the size.
/// The XXH64 and the image check run over the bytes as they pass; the record check reads them back.
///
/// One owner at a time (a put, or a served upload passed from thread to thread): unchecked
/// `Sendable` so it can be handed over. ``close()`` releases the file; the spool closes itself when
/// dropped.
final class S3ContentSpool: @unchecked Sendable {
    private let store: String
    private let identifier: String
    private let folder: URL
    private var memory: [UInt8] = []
    private var file: FileDescriptor?
    private var filePath = ""
    private(set) var size: Int64 = 0
    private var hasher = XXH64()
    private let validator = ImageValidator()

    /// Content up to this size grows the memory buffer as it comes.
    static let smallContent = 256 << 10

    init(store: String, identifier: String, folder: URL) {
        self.store = store
        self.identifier = identifier
        self.folder = folder
    }

    deinit { close() }

    /// Whether `count` more bytes would still be held in memory (no file I/O to append them).
    func appendsInMemory(_ count: Int) -> Bool { file == nil && memory.count + count <= S3BlobStore.memorySpoolLimit }

    /// Takes the next bytes; may write the spool file (blocking). Throws `tooLarge` past the
    /// largest S3 object, `io` when the spool file fails.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        let newSize = size + Int64(bytes.count)
        guard newSize <= S3MultipartPlan.maximumObjectByteCount else {
            throw BlobStoreError.tooLarge(
                what: "blob '\(identifier)' in S3 store '\(store)' (the largest S3 object)",
                limit: S3MultipartPlan.maximumObjectByteCount, actual: newSize)
        }
        hasher.update(bytes)
        validator.append(bytes)
        if file == nil, memory.count + bytes.count <= S3BlobStore.memorySpoolLimit {
            if memory.count + bytes.count > max(memory.capacity, Self.smallContent) {
                // Past a small blob's size, room for the most memory holds at once: a large body
                // arrives in many pieces, and growing by doubling would copy it again and fault in
                // new pages at each step (pages not written are never touched).
                memory.reserveCapacity(S3BlobStore.memorySpoolLimit)
            }
            memory.append(contentsOf: bytes)
        } else {
            let descriptor = try spoolFile()
            do throws(Errno) {
                try descriptor.writeAll(toAbsoluteOffset: size, bytes)
            } catch {
                throw BlobStoreError.io(operation: "write (S3 upload spool)", path: filePath, errno: error)
            }
        }
        size = newSize
    }

    /// Takes the next bytes.
    func append(_ data: Data) throws {
        try data.withUnsafeBytes { try append($0) }
    }

    /// The spool file, created (and unlinked at once: nothing is left behind by a crash) the first
    /// time content outgrows memory; the memory gathered so far moves into it.
    private func spoolFile() throws -> FileDescriptor {
        if let file { return file }
        let path = folder.appendingPathComponent(".s3-put-\(UUID().uuidString).spool").path
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, [.readWrite, .create, .exclusive, .closeOnExec], permissions: 0o600)
        } catch {
            throw BlobStoreError.io(operation: "create (S3 upload spool)", path: path, errno: error)
        }
        _ = try? FileSystem.unlink(path)
        file = descriptor
        filePath = path
        let failure = memory.withUnsafeBytes { bytes -> Errno? in
            do throws(Errno) { try descriptor.writeAll(toAbsoluteOffset: 0, bytes) } catch { return error }
            return nil
        }
        if let failure { throw BlobStoreError.io(operation: "write (S3 upload spool)", path: path, errno: failure) }
        memory = []
        return descriptor
    }

    /// Reads `buffer.count` bytes at `offset` of the content gathered.
    private func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws {
        if let file {
            let count: Int
            do throws(Errno) {
                count = try file.readFully(fromAbsoluteOffset: Int64(offset), into: buffer)
            } catch {
                throw BlobStoreError.io(operation: "read (S3 upload spool)", path: filePath, errno: error)
            }
            guard count == buffer.count else {
                throw BlobStoreError.io(operation: "read (S3 upload spool, short)", path: filePath, errno: ErrorNumber(rawValue: EIO))
            }
        } else {
            memory.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + buffer.count])) }
        }
    }

    /// The content checked as `options` ask (image, record) with its ETag and content type.
    func prepare(options: PutOptions) throws -> S3PreparedContent {
        let verdict = try validator.finish { offset, buffer in try self.read(at: offset, into: buffer) }
        let inspected = try ContentInspection.inspect(
            store: store, identifier: identifier, options: options, image: verdict, size: size,
            wholeContent: {
                if self.file == nil { return Data(self.memory) }
                var data = Data(count: Int(self.size))
                try data.withUnsafeMutableBytes { try self.read(at: 0, into: $0) }
                return data
            })
        let body: S3PreparedContent.Body = file.map { .spooled($0, path: filePath) } ?? .memory(memory)
        return S3PreparedContent(
            body: body, size: size, etag: ETag(checksum: hasher.finalize()), contentType: inspected.contentType, image: inspected.image)
    }

    /// Closes the spool file and drops the memory.
    func close() {
        memory = []
        if let file {
            self.file = nil
            try? file.close()
        }
    }
}
