import Glibc

/// A failed system call: what was called, on what, and the errno.
struct SystemError: Error, CustomStringConvertible {
    var call: String
    var path: String
    var code: Int32

    /// The error of `call` on `path`, with the current `errno`.
    static func current(_ call: String, _ path: String = "") -> SystemError {
        SystemError(call: call, path: path, code: errno)
    }

    var description: String {
        (path.isEmpty ? call : "\(call) \(path)") + ": \(String(cString: strerror(code))) (errno \(code))"
    }
}
