#if canImport(Glibc)
import Glibc
#endif
import CBlobShim

/// An open file descriptor: a thin, typed wrapper over the raw `Int32`.
///
/// It is a value and does not close itself; the owner calls ``close()`` exactly once
/// (or uses ``closeAfter(_:)``). Every call retries on `EINTR` and throws ``Errno``.
package struct FileDescriptor: Hashable, Sendable {
    /// The raw descriptor number.
    package let rawValue: Int32

    /// Wraps a raw descriptor the caller owns.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// Flags for ``open(_:_:permissions:relativeTo:)``.
    package struct OpenOptions: OptionSet, Sendable {
        /// The raw `open(2)` flag bits.
        package let rawValue: Int32
        /// Wraps raw `open(2)` flag bits.
        package init(rawValue: Int32) { self.rawValue = rawValue }
        /// The union of `options`. Written out for this type: the generic `SetAlgebra` initializer an
        /// array literal otherwise goes through is not specialized across modules, and every open pays it.
        package init(arrayLiteral options: OpenOptions...) {
            var bits: Int32 = 0
            for option in options { bits |= option.rawValue }
            self.init(rawValue: bits)
        }
        /// `O_RDONLY`.
        package static let readOnly = OpenOptions([])
        /// `O_WRONLY`.
        package static let writeOnly = OpenOptions(rawValue: O_WRONLY)
        /// `O_RDWR`.
        package static let readWrite = OpenOptions(rawValue: O_RDWR)
        /// `O_CREAT`.
        package static let create = OpenOptions(rawValue: O_CREAT)
        /// `O_EXCL`: with `create`, fail if the file exists.
        package static let exclusive = OpenOptions(rawValue: O_EXCL)
        /// `O_TRUNC`.
        package static let truncate = OpenOptions(rawValue: O_TRUNC)
        /// `O_APPEND`.
        package static let append = OpenOptions(rawValue: O_APPEND)
        /// `O_DIRECTORY`: fail unless the path is a directory.
        package static let directory = OpenOptions(rawValue: O_DIRECTORY)
        /// `O_NOFOLLOW`: fail if the last component is a symbolic link.
        package static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
        /// `O_NONBLOCK`.
        package static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        /// `O_NOATIME`: reading does not update the file's access time. Only the file's owner (or a
        /// process with `CAP_FOWNER`) may ask; others get `EPERM`.
        package static let noAccessTime = OpenOptions(rawValue: cblob_o_noatime())
        /// `O_CLOEXEC`; always added by ``FileDescriptor/open(_:_:permissions:relativeTo:)``.
        package static let closeOnExec = OpenOptions(rawValue: O_CLOEXEC)
    }

    /// Opens `path` (relative to `directory` when given, as `openat(2)`), always close-on-exec.
    package static func open(
        _ path: String, _ options: OpenOptions, permissions: mode_t = 0o644,
        relativeTo directory: FileDescriptor? = nil
    ) throws(Errno) -> FileDescriptor {
        let flags = options.union(.closeOnExec).rawValue
        let dirfd = directory?.rawValue ?? AT_FDCWD
        if FileSystemSeam.isActive { try FileSystemSeam.willPerform(.open(path: path, flags: flags, descriptor: -1)) }
        let fd = try retryingOnInterrupt { openat(dirfd, path, flags, permissions) }
        if FileSystemSeam.isActive { FileSystemSeam.didPerform(.open(path: path, flags: flags, descriptor: fd)) }
        return FileDescriptor(rawValue: fd)
    }

    /// Opens `path` only if the kernel can resolve every component from its caches, so the call never
    /// waits for the disk (`openat2(2)` with `RESOLVE_CACHED`, Linux 5.12+; always close-on-exec).
    ///
    /// Throws ``Errno/wouldBlock`` when some component is not cached, and `ENOSYS` or `EINVAL` where
    /// the kernel lacks the call or the flag. `options` must not contain `create` or `truncate`.
    package static func openIfCached(_ path: String, _ options: OpenOptions) throws(Errno) -> FileDescriptor {
        if FileSystemSeam.isActive { try FileSystemSeam.willPerform(.open(path: path, flags: options.rawValue, descriptor: -1)) }
        let fd = try retryingOnInterrupt { cblob_open_cached(path, options.rawValue) }
        if FileSystemSeam.isActive { FileSystemSeam.didPerform(.open(path: path, flags: options.rawValue, descriptor: fd)) }
        return FileDescriptor(rawValue: fd)
    }

    /// Closes the descriptor. `EINTR` is not retried: on Linux the descriptor is gone either way.
    package func close() throws(Errno) {
        if FileSystemSeam.isActive { try FileSystemSeam.willPerform(.close(descriptor: rawValue)) }
        if Glibc.close(rawValue) == -1, errno != EINTR { throw Errno.current }
    }

    /// Runs `body`, then closes the descriptor whatever happened.
    package func closeAfter<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        defer {
            if FileSystemSeam.isActive { try? FileSystemSeam.willPerform(.close(descriptor: rawValue)) }
            _ = Glibc.close(rawValue)
        }
        return try body()
    }

    /// Reads up to `buffer.count` bytes at the current offset; 0 means end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `buffer.count` bytes at `offset` without moving the file offset.
    package func read(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        if FileSystemSeam.isActive { try FileSystemSeam.willPerform(.read(descriptor: rawValue, offset: offset, count: buffer.count)) }
        return try retryingOnInterrupt { pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Reads up to `buffer.count` bytes at `offset` only from the page cache, never waiting for the
    /// disk (`preadv2(2)` with `RWF_NOWAIT`): a short count when only the first part is cached, and
    /// ``Errno/wouldBlock`` when none of it is. Filesystems that cannot tell give `EOPNOTSUPP`.
    package func readIfCached(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { cblob_pread_nowait(rawValue, buffer.baseAddress, UInt(buffer.count), offset) }
    }

    /// Reads at `offset` until `buffer` is full or the file ends; returns the bytes read.
    package func readFully(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        var total = 0
        while total < buffer.count {
            let n = try read(fromAbsoluteOffset: offset + Int64(total), into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
            if n == 0 { break }
            total += n
        }
        return total
    }

    /// Writes all of `bytes` at the current offset, looping over short writes.
    package func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            if FileSystemSeam.isActive { try FileSystemSeam.willPerform(.write(descriptor: rawValue, offset: nil, bytes: Array(rest))) }
            let n = try retryingOnInterrupt { Glibc.write(rawValue, rest.baseAddress!, rest.count) }
            if FileSystemSeam.isActive { FileSystemSeam.didPerform(.write(descriptor: rawValue, offset: nil, bytes: Array(rest[..<n]))) }
            offset += n
        }
    }

    /// Writes all of `bytes` at `offset` without moving the file offset.
    package func writeAll(toAbsoluteOffset offset: Int64, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var written = 0
        while written < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[written...])
            let at = offset + Int64(written)
            if FileSystemSeam.isActive { try FileSystemSeam.willPerform(.write(descriptor: rawValue, offset: at, bytes: Array(rest))) }
            let n = try retryingOnInterrupt { pwrite(rawValue, rest.baseAddress!, rest.count, off_t(at)) }
            if FileSystemSeam.isActive { FileSystemSeam.didPerform(.write(descriptor: rawValue, offset: at, bytes: Array(rest[..<n]))) }
            written += n
        }
    }

    /// Repositions the file offset (`lseek(2)` with `SEEK_SET`).
    package func seek(toAbsoluteOffset offset: Int64) throws(Errno) {
        try observed(.seek(descriptor: rawValue, offset: offset)) { () throws(Errno) in
            _ = try retryingOnInterrupt { lseek(rawValue, off_t(offset), SEEK_SET) }
        }
    }

    /// Flushes data and metadata to stable storage (`fsync(2)`); works on directories too.
    package func sync() throws(Errno) {
        try observed(.sync(descriptor: rawValue)) { () throws(Errno) in _ = try retryingOnInterrupt { fsync(rawValue) } }
    }

    /// Flushes data and the metadata needed to read it back (`fdatasync(2)`).
    package func dataSync() throws(Errno) {
        try observed(.dataSync(descriptor: rawValue)) { () throws(Errno) in _ = try retryingOnInterrupt { fdatasync(rawValue) } }
    }

    /// Commits the whole filesystem holding this descriptor (`syncfs(2)`).
    package func syncFileSystem() throws(Errno) {
        try observed(.syncFileSystem(descriptor: rawValue)) { () throws(Errno) in _ = try retryingOnInterrupt { cblob_syncfs(rawValue) } }
    }

    /// Truncates or extends the file to `size` bytes.
    package func resize(to size: Int64) throws(Errno) {
        try observed(.resize(descriptor: rawValue, size: size)) { () throws(Errno) in
            _ = try retryingOnInterrupt { ftruncate(rawValue, off_t(size)) }
        }
    }

    /// `fstat(2)`.
    package func status() throws(Errno) -> FileStatus {
        var st = stat()
        _ = try retryingOnInterrupt { fstat(rawValue, &st) }
        return FileStatus(st)
    }

    /// Takes or releases a whole-file advisory lock (`flock(2)`); `false` when `nonBlocking` and another holder has it.
    package func lock(exclusive: Bool = true, nonBlocking: Bool = true) throws(Errno) -> Bool {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | (nonBlocking ? LOCK_NB : 0)
        while flock(rawValue, operation) == -1 {
            let error = Errno.current
            if error == .interrupted { continue }
            if error == .wouldBlock { return false }
            throw error
        }
        return true
    }
}
