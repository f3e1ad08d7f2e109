import BlobClient
import BlobStore
import BlobSystem

#if canImport(Glibc)
import Glibc
#endif

/// The exit statuses of `blob`, as documented in `blob help`.
package enum ExitCode: Int32, Sendable, CaseIterable {
    /// Success.
    case success = 0
    /// Anything not covered below (e.g. `verify` found problems, a store in use by another process,
    /// binary content refused on a terminal, a declined confirmation).
    case failure = 1
    /// The blob or store does not exist.
    case notFound = 2
    /// A precondition failed: `--if-match` saw another ETag, or `--if-none-match` found the blob.
    case preconditionFailed = 3
    /// The content was refused: not an image, not a valid record, invalid metadata, too large.
    case invalidContent = 4
    /// The command line is wrong.
    case usage = 64
    /// The daemon cannot be reached.
    case unavailable = 69
    /// Reading or writing a file, standard input/output, or the store's files failed.
    case ioError = 74

    /// One line for the EXIT CODES section of `blob help`.
    var summary: String {
        switch self {
        case .success: return "success"
        case .failure: return "any other failure (including 'verify' finding problems, binary output refused, a declined confirmation)"
        case .notFound: return "blob or store not found (or nothing under an 'rm -r' prefix)"
        case .preconditionFailed: return "precondition failed (--if-match ETag differs, --if-none-match blob exists)"
        case .invalidContent: return "invalid content (not an image, invalid record, invalid metadata, too large)"
        case .usage: return "usage error (the command line is wrong)"
        case .unavailable: return "daemon or backend unreachable (no blobd at the socket: use --root DIR for the embedded store; or the store's object store did not answer)"
        case .ioError: return "I/O error (a file, standard input/output, or the store's files)"
        }
    }

    /// The status for an error thrown by a command.
    package static func `for`(_ error: any Error) -> ExitCode {
        switch error {
        case is UsageError:
            return .usage
        case let reported as ReportedError:
            return .for(reported.underlying)
        case let error as CLIError:
            switch error {
            case .storeNotFound, .nothingMatches: return .notFound
            case .daemonUnreachable: return .unavailable
            case .localIO: return .ioError
            case .problemsFound, .binaryOutputToTerminal, .noFileName, .notConfirmed, .storeInUse: return .failure
            }
        case let error as BlobStoreError:
            switch error {
            case .notFound: return .notFound
            case .preconditionFailed: return .preconditionFailed
            case .notAnImage, .invalidRecord, .invalidMetadata, .tooLarge: return .invalidContent
            case .invalidIdentifier, .invalidStoreName, .invalidQuery: return .usage
            case .io, .corrupt: return .ioError
            case .rangeNotSatisfiable, .storeLocked, .unsupportedFormat: return .failure
            case .backendUnavailable: return .unavailable
            }
        case let error as BlobClientError:
            switch error {
            case .daemonUnreachable: return .unavailable
            case .timeout, .protocolError: return .ioError
            case .http: return .failure
            }
        case is Errno:
            return .ioError
        default:
            return .failure
        }
    }
}

/// Failures of the command line tool itself (the store's own failures are ``BlobStoreError``s).
package enum CLIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A command that reads found no such store.
    case storeNotFound(store: String, location: String)
    /// Nothing answers at the daemon's socket (or no daemon client is built in).
    case daemonUnreachable(socket: String, reason: String)
    /// A local file, standard input or standard output failed.
    case localIO(operation: String, path: String, errno: Errno)
    /// `verify` found corrupt or orphaned files (the report has been printed).
    case problemsFound(count: Int)
    /// `get` without `-o` would write binary content to a terminal.
    case binaryOutputToTerminal
    /// `get -o DIR/` for an identifier with no usable last component (`a/..`).
    case noFileName(identifier: String, folder: String)
    /// `rm -r` found no blob under the prefix.
    case nothingMatches(what: String)
    /// A confirmation prompt was answered with something other than yes.
    case notConfirmed(what: String)
    /// With `--root`, another process holds the store's lock: `holder` as its lock file names it
    /// (`pid N`), `daemon` when that is the blobd serving the root (never waited for), `waited` how
    /// long this process waited for it.
    case storeInUse(store: String, holder: String, daemon: Bool, waited: Duration)

    package var description: String {
        switch self {
        case .storeNotFound(let store, let location):
            return "store '\(store)' not found (\(location))"
        case .daemonUnreachable(let socket, let reason):
            return "cannot reach the daemon at \(socket): \(reason); start it with 'blobd', or use '--root DIR' for the embedded store"
        case .localIO(let operation, let path, let errno):
            return "\(operation) failed for \(path): \(errno)"
        case .problemsFound(let count):
            return "verification found \(count) problem\(count == 1 ? "" : "s")"
        case .binaryOutputToTerminal:
            return "binary output can mess up your terminal; use '-o FILE' to write a file, or '-o -' to write it here anyway"
        case .noFileName(let identifier, let folder):
            return "cannot name a file in \(folder) after blob '\(identifier)'; give '-o' a file name"
        case .nothingMatches(let what):
            return "no blobs to remove in \(what)"
        case .notConfirmed(let what):
            return "not confirmed; \(what)"
        case .storeInUse(let store, let holder, let daemon, let waited):
            if daemon {
                return "store '\(store)' is served by blobd (\(holder)); use blob without '--root' (through the daemon) or stop blobd"
            }
            if waited > .zero {
                return "store '\(store)' is still in use by another process (\(holder)) after waiting \(CLIError.seconds(waited)); "
                    + "retry when it has finished, or wait longer with '--wait SECONDS'"
            }
            return "store '\(store)' is in use by another process (\(holder)); retry when it has finished, or wait for it with '--wait SECONDS'"
        }
    }

    /// `10 s`, `0.5 s`.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return "\(seconds) s" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) s"
    }

    /// Whether writing failed because the reader of standard output went away (`blob get … | head`).
    var isBrokenPipe: Bool {
        if case .localIO(_, _, let errno) = self { return errno.rawValue == EPIPE }
        return false
    }
}
