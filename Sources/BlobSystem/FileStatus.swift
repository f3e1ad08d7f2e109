#if canImport(Glibc)
import Glibc
#endif

/// The fields of `struct stat` this project uses.
package struct FileStatus: Hashable, Sendable {
    /// What kind of file this is.
    package enum Kind: Sendable, Hashable {
        /// A regular file.
        case regular
        /// A directory.
        case directory
        /// A symbolic link (only from `lstat`).
        case symbolicLink
        /// A Unix domain socket.
        case socket
        /// Anything else (device, FIFO).
        case other
    }

    /// The file's kind.
    package var kind: Kind
    /// Size in bytes.
    package var size: Int64
    /// Permission bits.
    package var permissions: mode_t
    /// Owner.
    package var userID: uid_t
    /// Device number.
    package var device: UInt64
    /// Inode number; with `device`, identifies the file.
    package var inode: UInt64
    /// Number of hard links.
    package var linkCount: Int
    /// Modification time, nanoseconds since the Unix epoch.
    package var modificationNanoseconds: Int64

    /// Converts a raw `stat` structure.
    package init(_ st: stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        size = Int64(st.st_size)
        permissions = st.st_mode & 0o7777
        userID = st.st_uid
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        linkCount = Int(st.st_nlink)
        modificationNanoseconds = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    }
}
