internal import BlobSystem

/// A put's file in the store's temp folder, from its creation until it is renamed under its blob's
/// name or dropped. Relaxed and durable puts write the same kind: a new entry made durable together
/// with its file holds on every filesystem, journalled or not, and a file that a killed process
/// leaves behind is swept when the store next opens (STORAGE.md, "Which kind of temp file").
///
/// A value with an owner, like ``FileDescriptor``: whoever holds it ends it exactly once, by
/// publishing it or with ``drop()``.
struct TempFile: Sendable {
    /// The file's path in the temp folder; errors about the file name it.
    let path: String
    /// Open for reading and writing while the put writes the file; `nil` once written, so a put
    /// waiting for its commit holds no descriptor.
    private(set) var descriptor: FileDescriptor?

    /// A new file at `path` (exclusive).
    static func create(at path: String) throws(Errno) -> TempFile {
        let descriptor = try FileDescriptor.open(path, [.readWrite, .create, .exclusive], permissions: 0o644)
        return TempFile(path: path, descriptor: descriptor)
    }

    /// The file is written: its descriptor is closed.
    mutating func written() throws(Errno) {
        guard let descriptor else { return }
        self.descriptor = nil
        try descriptor.close()
    }

    /// Runs `body` with a descriptor open for writing: the file's own if open, else one opened by path.
    func withWritableDescriptor<R>(_ body: (FileDescriptor) throws -> R) throws -> R {
        if let descriptor { return try body(descriptor) }
        let opened = try FileDescriptor.open(path, [.writeOnly])
        return try opened.closeAfter { try body(opened) }
    }

    /// Publishes the file as `destination`, atomically replacing whatever is there.
    func publish(replacing destination: String) throws(Errno) {
        try FileSystem.rename(path, to: destination)
    }

    /// Ends a file that will not be published: closes its descriptor if open and unlinks it. Blocking,
    /// and freeing blocks may wait for the disk (TRIM): committers call it on the reclaim queue.
    func drop() {
        if let descriptor { try? descriptor.close() }
        _ = try? FileSystem.unlinkIfExists(path)
    }
}
