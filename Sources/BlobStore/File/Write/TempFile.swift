internal import BlobSystem
import Synchronization

/// A put's file from its creation until it is published under its blob's name or dropped.
///
/// Two kinds, chosen by ``TempBlobWriter`` when it creates the file:
/// - **anonymous** (relaxed puts, where the filesystem allows): created with `O_TMPFILE` in the store's
///   temp folder, it has no name until the commit links it under its blob's, so a new blob changes one
///   folder (the bucket's) instead of two, and a process killed mid-put leaves nothing to sweep. The
///   descriptor is the file: it stays open until the commit publishes or drops it.
/// - **named** (durable puts, and relaxed ones on filesystems without anonymous files or when too many
///   are open): a file in the temp folder, closed once written and renamed into place. Durable puts
///   keep this kind because its crash behaviour (a new entry synced with its file) holds on every
///   filesystem, journalled or not.
///
/// A value with an owner, like ``FileDescriptor``: whoever holds it ends it exactly once, with
/// ``published()`` after the commit or ``drop()``.
struct TempFile: Sendable {
    /// The name in the temp folder. An anonymous file gets it only if a commit must replace an
    /// existing blob (linked here first, then renamed over it); errors about it name ``location``.
    let path: String
    /// Open for reading and writing while the file is anonymous; `nil` for a named file once written.
    private(set) var descriptor: FileDescriptor?
    /// Counts this file among the store's open anonymous files; `nil` for a named one.
    private let budget: AnonymousTempBudget?

    /// Whether the file has no name until it is published.
    var isAnonymous: Bool { budget != nil }

    /// Where the file is, for error messages: its path, or for an anonymous file (which has no entry
    /// at ``path`` to look for) its folder, so that a message names something that exists.
    var location: String { TempFile.location(path: path, anonymous: isAnonymous) }

    /// ``location`` of a file at `path` of either kind.
    static func location(path: String, anonymous: Bool) -> String {
        guard anonymous, let slash = path.lastIndex(of: "/") else { return path }
        return String(path[..<slash]) + "/ (an unnamed temp file)"
    }

    /// A named file, created at `path` (exclusive).
    static func named(at path: String) throws(Errno) -> TempFile {
        let descriptor = try FileDescriptor.open(path, [.readWrite, .create, .exclusive], permissions: 0o644)
        return TempFile(path: path, descriptor: descriptor, budget: nil)
    }

    /// An anonymous file in the folder of `path`, counted in `budget` (which the caller reserved).
    static func anonymous(in folder: String, path: String, budget: AnonymousTempBudget) throws(Errno) -> TempFile {
        let descriptor = try FileDescriptor.openAnonymous(inDirectory: folder)
        return TempFile(path: path, descriptor: descriptor, budget: budget)
    }

    /// The file is written: a named file's descriptor is closed (a put waiting for its commit holds no
    /// descriptor then); an anonymous file keeps it, since it is the only way to the file.
    mutating func written() throws(Errno) {
        guard !isAnonymous, let descriptor else { return }
        self.descriptor = nil
        try descriptor.close()
    }

    /// Runs `body` with a descriptor open for writing: the file's own if open, else one opened by path.
    func withWritableDescriptor<R>(_ body: (FileDescriptor) throws -> R) throws -> R {
        if let descriptor { return try body(descriptor) }
        let opened = try FileDescriptor.open(path, [.writeOnly])
        return try opened.closeAfter { try body(opened) }
    }

    /// Publishes the file as `destination`, which must not exist: fails with `EEXIST` if it does
    /// (a link for an anonymous file; `renameat2(RENAME_NOREPLACE)` for a named one, which gives
    /// `EINVAL` where the filesystem cannot).
    func publishNew(as destination: String) throws(Errno) {
        if let descriptor, isAnonymous {
            try FileSystem.link(descriptor, as: destination)
        } else {
            try FileSystem.renameNoReplace(path, to: destination)
        }
    }

    /// Publishes the file as `destination`, atomically replacing whatever is there. An anonymous file
    /// is first linked at ``path`` (a link cannot replace), then renamed.
    func publish(replacing destination: String) throws(Errno) {
        if let descriptor, isAnonymous {
            try FileSystem.link(descriptor, as: path)
            do { try FileSystem.rename(path, to: destination) } catch {
                _ = try? FileSystem.unlinkIfExists(path)
                throw error
            }
        } else {
            try FileSystem.rename(path, to: destination)
        }
    }

    /// Ends a published file: closes an anonymous file's descriptor (its content now has a name).
    func published() {
        guard isAnonymous, let descriptor else { return }
        try? descriptor.close()
        budget?.release()
    }

    /// Ends a file that will not be published: closes its descriptor (which frees an anonymous file's
    /// blocks) and unlinks a named one. Blocking, and freeing blocks may wait for the disk (TRIM):
    /// committers call it on the reclaim queue.
    func drop() {
        if let descriptor { try? descriptor.close() }
        if isAnonymous {
            budget?.release()
        } else {
            _ = try? FileSystem.unlinkIfExists(path)
        }
    }
}
