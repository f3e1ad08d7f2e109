#if canImport(Glibc)
import Glibc
#endif

/// A POSIX error number, as returned in `errno` by a failed system call.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public let rawValue: Int32

    /// Wraps a raw `errno` value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    /// The symbolic name and the C library's text, e.g. `ENOENT (No such file or directory)`.
    public var description: String {
        let text = String(cString: strerror(rawValue))
        if let name = Errno.names[rawValue] { return "\(name) (\(text))" }
        return "errno \(rawValue) (\(text))"
    }

    /// No such file or directory.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// File exists.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// Interrupted system call.
    public static let interrupted = Errno(rawValue: EINTR)
    /// Resource temporarily unavailable.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// No space left on device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// File too large.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// Not a directory.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// Directory not empty.
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    /// Permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EPERM`: the operation needs privileges the caller lacks (e.g. `O_NOATIME` on another user's file).
    public static let notPermitted = Errno(rawValue: EPERM)

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
public func retryingOnInterrupt<Result: BinaryInteger>(_ body: () -> Result) throws(Errno) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}
