import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// systemd socket activation: when systemd (or any supervisor following its protocol) started us
/// with a listening socket, serve that instead of binding our own.
///
/// The protocol: `LISTEN_PID` is our pid and `LISTEN_FDS` ≥ 1; the sockets start at fd 3.
enum SocketActivation {
    /// The first passed socket (fd 3), made blocking and close-on-exec, or `nil` when not activated.
    /// Clears the variables so children do not believe they were activated too.
    static func inheritedListener(
        environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()
    ) throws -> FileDescriptor? {
        guard let listenPID = environment["LISTEN_PID"], Int32(listenPID) == pid,
            let text = environment["LISTEN_FDS"], let count = Int(text), count >= 1
        else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        let fd = FileDescriptor(rawValue: 3)
        guard let status = try? fd.status(), status.kind == .socket else {
            throw StartupError("socket activation: fd 3 is not a socket")
        }
        _ = fcntl(fd.rawValue, F_SETFD, FD_CLOEXEC)
        // The acceptor blocks in accept(); a non-blocking inherited socket would make it spin.
        try fd.setNonBlocking(false)
        return fd
    }
}
