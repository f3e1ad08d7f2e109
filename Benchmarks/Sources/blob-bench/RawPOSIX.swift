import Glibc

/// Plain POSIX loops doing a store's file work with no store at all: the floor a store's per-blob
/// cost is measured against.
///
/// Deliberately minimal: paths are built before the clock starts, one buffer is reused for every
/// blob, and each function does only the system calls the operation needs. Blocking: run these on
/// their own threads (see ``Workers``), never on the Swift concurrency pool.
enum RawPOSIX {
    /// A failed system call.
    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var path: String
        var code: Int32
        var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
    }

    /// Writes `content` to `temps[i]` and renames it to `finals[i]` for every `i` in `indices`;
    /// with `durable`, fsyncs each file before the rename and `directory` after it.
    static func put(
        _ content: UnsafeRawBufferPointer, finals: [String], temps: [String], indices: StrideTo<Int>, durable: Bool, directory: Int32
    ) throws(Failure) {
        for index in indices {
            let temp = temps[index]
            let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw Failure(operation: "open", path: temp, code: errno) }
            var done = 0
            while done < content.count {
                let count = write(fd, content.baseAddress! + done, content.count - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    close(fd)
                    throw Failure(operation: "write", path: temp, code: code)
                }
                done += count
            }
            if durable, fsync(fd) != 0 {
                let code = errno
                close(fd)
                throw Failure(operation: "fsync", path: temp, code: code)
            }
            guard close(fd) == 0 else { throw Failure(operation: "close", path: temp, code: errno) }
            guard rename(temp, finals[index]) == 0 else { throw Failure(operation: "rename", path: finals[index], code: errno) }
            if durable, fsync(directory) != 0 { throw Failure(operation: "fsync", path: "(folder)", code: errno) }
        }
    }

    /// For each `k` in `operations`, reads `paths[k % paths.count]` (`size` bytes) into `buffer`: open, read, close.
    static func get(_ buffer: UnsafeMutableRawBufferPointer, paths: [String], size: Int, operations: StrideTo<Int>) throws(Failure) {
        for operation in operations {
            let path = paths[operation % paths.count]
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Failure(operation: "open", path: path, code: errno) }
            var done = 0
            // Stop at the known size: one read per small file, as a store that knows the size would do.
            while done < size {
                let count = read(fd, buffer.baseAddress! + done, size - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    close(fd)
                    throw Failure(operation: "read", path: path, code: code)
                }
                if count == 0 { break }
                done += count
            }
            close(fd)
            guard done == size else { throw Failure(operation: "read (short)", path: path, code: EIO) }
        }
    }

    /// The names in `folder` (without `.` and `..`) via opendir/readdir: what a listing minimally costs.
    static func list(_ folder: String) throws(Failure) -> [String] {
        guard let stream = opendir(folder) else { throw Failure(operation: "opendir", path: folder, code: errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names
    }

    /// Opens `folder` for fsync.
    static func openDirectory(_ folder: String) throws(Failure) -> Int32 {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(operation: "open", path: folder, code: errno) }
        return fd
    }
}
