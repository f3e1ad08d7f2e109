package import BlobSystem

/// The POSIX error number (`errno`) of a failed system call, as ``BlobStoreError/io(operation:path:errno:)``
/// reports it: the number, its symbolic name and the C library's text.
public struct ErrorNumber: Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value, e.g. `ENOENT` (2 on Linux).
    public let rawValue: Int32

    /// Wraps a raw `errno` value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Wraps the `Errno` a system call wrapper threw.
    package init(_ errno: Errno) { self.rawValue = errno.rawValue }

    /// The symbolic name, e.g. `ENOENT`; `nil` for a number without a well-known name.
    public var name: String? { Errno(rawValue: rawValue).name }

    /// The C library's text, e.g. `No such file or directory`.
    public var message: String { Errno(rawValue: rawValue).message }

    /// The symbolic name and the C library's text, e.g. `ENOENT (No such file or directory)`.
    public var description: String { Errno(rawValue: rawValue).description }
}
