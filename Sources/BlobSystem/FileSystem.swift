#if canImport(Glibc)
import Glibc
#endif
import CBlobShim

/// Path-level file operations: thin wrappers over the syscalls, retrying on `EINTR`, throwing ``Errno``.
package enum FileSystem {
    /// `stat(2)`, following symbolic links.
    package static func status(_ path: String) throws(Errno) -> FileStatus {
        var st = stat()
        _ = try retryingOnInterrupt { stat(path, &st) }
        return FileStatus(st)
    }

    /// `lstat(2)`: the link itself, not its target.
    package static func linkStatus(_ path: String) throws(Errno) -> FileStatus {
        var st = stat()
        _ = try retryingOnInterrupt { lstat(path, &st) }
        return FileStatus(st)
    }

    /// `stat` that answers `nil` instead of throwing `ENOENT`.
    package static func statusIfExists(_ path: String) throws(Errno) -> FileStatus? {
        do { return try status(path) } catch .noSuchFileOrDirectory { return nil }
    }

    /// Creates one directory; an existing directory is not an error. Returns whether it created one
    /// (whose entry is durable only once its parent is synced).
    @discardableResult
    package static func makeDirectory(_ path: String, permissions: mode_t = 0o755) throws(Errno) -> Bool {
        if FileSystemSeam.isActive { try FileSystemSeam.willPerform(.makeDirectory(path: path)) }
        if mkdir(path, permissions) == 0 {
            if FileSystemSeam.isActive { FileSystemSeam.didPerform(.makeDirectory(path: path)) }
            return true
        }
        let error = Errno.current
        if error == .fileExists, (try? status(path))?.kind == .directory { return false }
        throw error
    }

    /// Creates a directory and any missing parents, like `mkdir -p`; returns the ones it created, outermost first.
    @discardableResult
    package static func makeDirectories(_ path: String, permissions: mode_t = 0o755) throws(Errno) -> [String] {
        if (try? status(path))?.kind == .directory { return [] }
        var created: [String] = []
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if try makeDirectory(prefix, permissions: permissions) { created.append(prefix) }
            prefix += "/"
        }
        return created
    }

    /// `rename(2)`: atomically replaces `destination` if it exists.
    package static func rename(_ source: String, to destination: String) throws(Errno) {
        try observed(.rename(from: source, to: destination, noReplace: false)) { () throws(Errno) in
            _ = try retryingOnInterrupt { Glibc.rename(source, destination) }
        }
    }

    /// `renameat2(2)` with `RENAME_NOREPLACE`: fails with `EEXIST` rather than replace.
    package static func renameNoReplace(_ source: String, to destination: String) throws(Errno) {
        try observed(.rename(from: source, to: destination, noReplace: true)) { () throws(Errno) in
            _ = try retryingOnInterrupt { cblob_renameat2(AT_FDCWD, source, AT_FDCWD, destination, cblob_rename_noreplace()) }
        }
    }

    /// `link(2)`: a second name for the same file.
    package static func link(_ existing: String, as newName: String) throws(Errno) {
        try observed(.link(from: existing, to: newName)) { () throws(Errno) in
            _ = try retryingOnInterrupt { Glibc.link(existing, newName) }
        }
    }

    /// `linkat(2)` of an open file: gives the file behind `descriptor` (such as one from
    /// ``FileDescriptor/openAnonymous(inDirectory:permissions:)``) the name `newName`, failing with
    /// `EEXIST` rather than replace anything there.
    ///
    /// Goes through the descriptor's `/proc/self/fd` link, which needs no privilege (`AT_EMPTY_PATH`
    /// needs `CAP_DAC_READ_SEARCH` before Linux 6.10); gives `ENOENT` where `/proc` is not mounted.
    package static func link(_ descriptor: FileDescriptor, as newName: String) throws(Errno) {
        guard descriptor.rawValue >= 0 else { throw Errno(rawValue: EBADF) }
        try observed(.linkDescriptor(descriptor: descriptor.rawValue, to: newName)) { () throws(Errno) in try linkThroughProc(descriptor, as: newName) }
    }

    private static func linkThroughProc(_ descriptor: FileDescriptor, as newName: String) throws(Errno) {
        // The link's path built on the stack: every relaxed put makes one, and building a String
        // adds to each put's instructions (`Benchmarks/scripts/instructions put`).
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { (source) throws(Errno) in
            let prefix: StaticString = "/proc/self/fd/"
            let base = source.baseAddress!
            base.initialize(from: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
            let end = prefix.utf8CodeUnitCount + DecimalDigits.write(Int(descriptor.rawValue), to: base + prefix.utf8CodeUnitCount)
            base[end] = 0
            _ = try UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: end + 1) { path throws(Errno) in
                try retryingOnInterrupt { linkat(AT_FDCWD, path, AT_FDCWD, newName, AT_SYMLINK_FOLLOW) }
            }
        }
    }

    /// `unlink(2)`.
    package static func unlink(_ path: String) throws(Errno) {
        try observed(.unlink(path: path)) { () throws(Errno) in _ = try retryingOnInterrupt { Glibc.unlink(path) } }
    }

    /// `unlink` that reports whether the file existed instead of throwing `ENOENT`.
    @discardableResult
    package static func unlinkIfExists(_ path: String) throws(Errno) -> Bool {
        do { try unlink(path); return true } catch .noSuchFileOrDirectory { return false }
    }

    /// `rmdir(2)`.
    package static func removeDirectory(_ path: String) throws(Errno) {
        try observed(.removeDirectory(path: path)) { () throws(Errno) in _ = try retryingOnInterrupt { rmdir(path) } }
    }

    /// Removes a directory tree (no symbolic links are followed).
    package static func removeTree(_ path: String) throws(Errno) {
        guard let st = try? linkStatus(path) else { return }
        if st.kind == .directory {
            for entry in try DirectoryStream.entries(of: path) {
                try removeTree(path + "/" + entry.name)
            }
            try removeDirectory(path)
        } else {
            try unlinkIfExists(path)
        }
    }

    /// Opens `path` as a directory and fsyncs it, so that entries created or renamed in it are durable.
    package static func syncDirectory(_ path: String) throws(Errno) {
        let fd = try FileDescriptor.open(path, [.readOnly, .directory])
        try fd.closeAfter { () throws(Errno) in try fd.sync() }
    }
}
