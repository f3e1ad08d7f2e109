#if canImport(Glibc)
import Glibc
#endif

/// One entry of a directory listing.
package struct DirectoryEntry: Hashable, Sendable {
    /// What `d_type` says the entry is.
    package enum Kind: Sendable, Hashable {
        /// A regular file.
        case regular
        /// A directory.
        case directory
        /// Anything else, or a filesystem that does not report types.
        case other
    }
    /// The entry's name (never `.` or `..`).
    package var name: String
    /// The entry's kind as reported by `readdir`.
    package var kind: Kind
}

/// Reads directory entries with `opendir`/`readdir` (cheaper than Foundation's listing here).
package enum DirectoryStream {
    /// Where `d_name` starts in a `dirent`.
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// Calls `body` for every entry of `path` except `.` and `..`, in directory order; `body` returns `false` to stop.
    package static func forEachEntry(of path: String, _ body: (DirectoryEntry) throws -> Bool) throws {
        guard let dir = opendir(path) else { throw Errno.current }
        defer { closedir(dir) }
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw Errno.current }
                return
            }
            // Read the name in place, up to its NUL: `entry.pointee.d_name` would copy all 256 bytes
            // of the field, but the kernel's record ends after the name, so the last entry of a
            // `getdents` buffer can end before the field does (AddressSanitizer: heap-buffer-overflow).
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: DirectoryStream.nameOffset).assumingMemoryBound(to: CChar.self))
            if name == "." || name == ".." { continue }
            let kind: DirectoryEntry.Kind
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_REG): kind = .regular
            case Int32(DT_DIR): kind = .directory
            default: kind = .other
            }
            if try !body(DirectoryEntry(name: name, kind: kind)) { return }
        }
    }

    /// All entries of `path` except `.` and `..`.
    package static func entries(of path: String) throws(Errno) -> [DirectoryEntry] {
        var result: [DirectoryEntry] = []
        do {
            try forEachEntry(of: path) { result.append($0); return true }
        } catch let error as Errno {
            throw error
        } catch {
            preconditionFailure("unreachable: the body does not throw")
        }
        return result
    }
}
