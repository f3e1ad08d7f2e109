internal import BlobSystem

#if canImport(Glibc)
import Glibc
#endif

/// Where AWS configuration is read from: environment variables and files. The process's own by
/// default (``process``); tests and embedders pass their own, so resolving touches nothing else.
public struct AWSEnvironment: Sendable {
    /// The environment variables (`AWS_ACCESS_KEY_ID`, `AWS_PROFILE`, `HOME`, ...).
    public var variables: [String: String]
    /// Reads a whole text file: `nil` when there is no file at the path, an error for any other
    /// failure (a file that exists but cannot be read is reported, never taken for an absent one).
    public var readFile: @Sendable (_ path: String) throws -> String?

    /// An environment from its parts.
    public init(variables: [String: String], readFile: @escaping @Sendable (_ path: String) throws -> String?) {
        self.variables = variables
        self.readFile = readFile
    }

    /// The process's environment variables and file system.
    public static var process: AWSEnvironment {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            if let equals = pair.firstIndex(of: "=") {
                variables[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
            entry += 1
        }
        return AWSEnvironment(variables: variables, readFile: readTextFile)
    }

    /// The variable's value, or `nil` when it is unset or empty (the AWS tools treat both alike).
    func value(_ name: String) -> String? {
        guard let value = variables[name], !value.isEmpty else { return nil }
        return value
    }

    /// The largest configuration file read: AWS's files are a few kilobytes; a bigger one is a mistake.
    static let fileByteLimit = 1 << 20

    /// Reads `path` with the system calls; `nil` for `ENOENT` (and `ENOTDIR`: a path under a file).
    @Sendable static func readTextFile(_ path: String) throws -> String? {
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, .readOnly)
        } catch {
            if error == .noSuchFileOrDirectory || error.rawValue == ENOTDIR { return nil }
            throw error
        }
        return try descriptor.closeAfter { () throws -> String in
            var content: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = try buffer.withUnsafeMutableBytes { bytes throws(Errno) in try descriptor.read(into: bytes) }
                if count == 0 { break }
                content += buffer[0..<count]
                if content.count > fileByteLimit {
                    throw AWSFileTooLarge(limit: fileByteLimit)
                }
            }
            return String(decoding: content, as: UTF8.self)
        }
    }
}

/// A configuration file over ``AWSEnvironment/fileByteLimit``.
struct AWSFileTooLarge: Error, CustomStringConvertible {
    var limit: Int
    var description: String { "larger than the \(limit)-byte limit for an AWS configuration file" }
}
