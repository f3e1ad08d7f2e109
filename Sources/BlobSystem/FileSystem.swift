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
        try observed(.rename(from: source, to: destination)) { () throws(Errno) in
            _ = try retryingOnInterrupt { Glibc.rename(source, destination) }
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
