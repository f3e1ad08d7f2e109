#if canImport(Glibc)
import Glibc
#endif

/// A POSIX error number, as returned in `errno` by a failed system call.
package struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    package let rawValue: Int32

    /// Wraps a raw `errno` value.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    package static var current: Errno { Errno(rawValue: errno) }

    /// The symbolic name, e.g. `ENOENT`; `nil` for a number not in the table below.
    package var name: String? { Errno.names[rawValue] }

    /// The C library's text, e.g. `No such file or directory`.
    package var message: String { String(cString: strerror(rawValue)) }

    /// The symbolic name and the C library's text, e.g. `ENOENT (No such file or directory)`.
    package var description: String {
        if let name { return "\(name) (\(message))" }
        return "errno \(rawValue) (\(message))"
    }

    /// No such file or directory.
    package static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// File exists.
    package static let fileExists = Errno(rawValue: EEXIST)
    /// Interrupted system call.
    package static let interrupted = Errno(rawValue: EINTR)
    /// Resource temporarily unavailable.
    package static let wouldBlock = Errno(rawValue: EAGAIN)
    /// No space left on device.
    package static let noSpace = Errno(rawValue: ENOSPC)
    /// File too large.
    package static let fileTooLarge = Errno(rawValue: EFBIG)
    /// Not a directory.
    package static let notDirectory = Errno(rawValue: ENOTDIR)
    /// Directory not empty.
    package static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    /// Permission denied.
    package static let permissionDenied = Errno(rawValue: EACCES)
    /// `EPERM`: the operation needs privileges the caller lacks (e.g. `O_NOATIME` on another user's file).
    package static let notPermitted = Errno(rawValue: EPERM)

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", EBADF: "EBADF",
        EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EEXIST: "EEXIST",
        ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EINVAL: "EINVAL", EMFILE: "EMFILE",
        ENFILE: "ENFILE", EFBIG: "EFBIG", ENOSPC: "ENOSPC", EROFS: "EROFS",
        ENAMETOOLONG: "ENAMETOOLONG", ENOTEMPTY: "ENOTEMPTY", ELOOP: "ELOOP",
        EDQUOT: "EDQUOT", EPIPE: "EPIPE", ECONNREFUSED: "ECONNREFUSED",
        ECONNRESET: "ECONNRESET", EXDEV: "EXDEV", ENOTSUP: "ENOTSUP",
    ]
}

/// Runs `body` until it does not fail with `EINTR`; throws the `Errno` of any other failure.
///
/// A signal arriving mid-call is not a failure of the operation, so every wrapper here retries.
@inline(__always)
package func retryingOnInterrupt<Result: BinaryInteger>(_ body: () -> Result) throws(Errno) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}
