import Foundation
import Glibc

/// The file-system calls the harness needs around the measured work (never inside it).
enum Files {
    /// Creates `path` and any missing parents (mode 0755); an existing folder is fine.
    static func makeDirectories(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Deletes `path` and everything under it; a missing path is fine.
    static func removeTree(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw SystemError.current("lstat", path)
        }
        try FileManager.default.removeItem(atPath: path)
    }

    /// The size of the file at `path`.
    static func size(_ path: String) throws -> Int64 {
        var status = stat()
        guard stat(path, &status) == 0 else { throw SystemError.current("stat", path) }
        return Int64(status.st_size)
    }

    /// Creates `path` (failing if it exists when `exclusive`, else truncating it) and writes all of `bytes`.
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String, exclusive: Bool = false) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), 0o644)
        guard fd >= 0 else { throw SystemError.current("open", path) }
        var done = 0
        while done < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if count < 0 {
                if errno == EINTR { continue }
                let error = SystemError.current("write", path)
                close(fd)
                throw error
            }
            done += count
        }
        guard close(fd) == 0 else { throw SystemError.current("close", path) }
    }

    /// One entry of a folder.
    struct Entry {
        enum Kind { case directory, regular, other }
        var name: String
        var kind: Kind
    }

    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// The entries of the folder `path`, without `.` and `..`.
    static func entries(of path: String) throws -> [Entry] {
        guard let stream = opendir(path) else { throw SystemError.current("opendir", path) }
        defer { closedir(stream) }
        var entries: [Entry] = []
        while let entry = readdir(stream) {
            // d_name is NUL-terminated within the record the kernel filled; read it in place (the
            // record may be shorter than the 256 bytes the declaration says).
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name == "." || name == ".." { continue }
            let kind: Entry.Kind
            switch Int(entry.pointee.d_type) {
            case Int(DT_DIR): kind = .directory
            case Int(DT_REG): kind = .regular
            default: kind = .other
            }
            entries.append(Entry(name: name, kind: kind))
        }
        return entries
    }
}
