import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Getting the listening socket in place safely: a private directory, no stealing a live
/// daemon's socket, and removal of a dead one's.
enum SocketPlacement {
    /// Creates the socket's directory (0700) if missing, and refuses one that others could tamper with.
    static func prepareDirectory(for socketPath: String) throws {
        guard socketPath.utf8.count <= UnixSocket.maximumPathLength else {
            throw StartupError("socket path \(socketPath) is \(socketPath.utf8.count) bytes; the limit is \(UnixSocket.maximumPathLength)")
        }
        guard socketPath.hasPrefix("/") else { throw StartupError("socket path \(socketPath) must be absolute") }
        let directory = (socketPath as NSString).deletingLastPathComponent
        if (try? FileSystem.statusIfExists(directory)) == nil {
            do { try FileSystem.makeDirectories(directory, permissions: 0o700) } catch {
                throw StartupError("cannot create socket directory \(directory): \(error)")
            }
        }
        let status: FileStatus
        do { status = try FileSystem.linkStatus(directory) } catch {
            throw StartupError("cannot inspect socket directory \(directory): \(error)")
        }
        guard status.kind == .directory else { throw StartupError("socket directory \(directory) is not a directory") }
        guard status.userID == getuid() else {
            throw StartupError("socket directory \(directory) is owned by uid \(status.userID), not by this user (\(getuid())); choose another --socket")
        }
        guard status.permissions & 0o022 == 0 else {
            throw StartupError("socket directory \(directory) is writable by group or others (mode \(String(status.permissions & 0o7777, radix: 8))); run chmod go-w on it or choose another --socket")
        }
    }

    /// Removes a socket file left by a daemon that is gone; refuses to touch a live one or a non-socket.
    static func clearStale(_ socketPath: String) throws {
        guard let status = try? FileSystem.linkStatus(socketPath) else { return }
        guard status.kind == .socket else {
            throw StartupError("\(socketPath) exists and is not a socket; remove it or choose another --socket")
        }
        do {
            let probe = try UnixSocket.connect(path: socketPath)
            try? probe.close()
            throw StartupError("another daemon is already listening on \(socketPath); not taking its socket")
        } catch let error as Errno where error.rawValue == ECONNREFUSED {
            // Nobody listens: the file is a leftover. Check again right before removing.
            guard let again = try? FileSystem.linkStatus(socketPath), again.kind == .socket, again.inode == status.inode else { return }
            do { try FileSystem.unlink(socketPath) } catch {
                throw StartupError("cannot remove stale socket \(socketPath): \(error)")
            }
        } catch let error as StartupError {
            throw error
        } catch {
            throw StartupError("cannot probe existing socket \(socketPath): \(error)")
        }
    }
}
