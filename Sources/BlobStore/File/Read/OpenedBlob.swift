internal import BlobSystem
import Foundation

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

    /// `.absent` for a version expired at `now` (ns since 1970): conditions and `created` treat it as gone.
    func unexpired(atNanoseconds now: @autoclosure () -> Int64) -> ExistingBlob {
        if case .present(let header) = self, header.isExpired(atNanoseconds: now()) { return .absent }
        return self
    }
}
