import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The write end of the self-pipe, for the signal handler (which can touch only globals).
/// Written once before the handlers are installed, read-only afterwards.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Turns SIGTERM and SIGINT (and SIGHUP) into calls on an ordinary thread, with the self-pipe trick: the
/// handler only `write`s the signal number (async-signal-safe), and a dedicated thread blocked
/// in `read` does the real work. Unlike `sigwait`, this does not depend on every thread (including
/// Dispatch's) having the signals blocked.
enum SignalWatcher {
    /// Installs the handlers and starts the watching thread; `onSignal` runs once (SIGTERM or
    /// SIGINT), on that thread, and `onHangUp` for each SIGHUP before that (an operator asking for
    /// the log file to be reopened; without the handler SIGHUP would kill the daemon).
    static func start(onHangUp: @escaping @Sendable () -> Void = {}, _ onSignal: @escaping @Sendable (Int32) -> Void) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw StartupError("cannot create the signal pipe: \(String(cString: strerror(errno)))") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        signalPipeWriteEnd = fds[1]
        let readEnd = fds[0]
        let handler: @convention(c) (Int32) -> Void = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(signalPipeWriteEnd, &byte, 1)
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
        signal(SIGHUP, handler)
        // Writes to a socket whose peer is gone must fail with EPIPE, not kill the daemon (sendfile has no MSG_NOSIGNAL).
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these signals blocked (the mask survives exec);
        // unblock them here, before the daemon's other threads are created and inherit the mask.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let n = read(readEnd, &byte, 1)
                if n == 1 && Int32(byte) == SIGHUP {
                    onHangUp()
                    continue
                }
                if n == 1 { break }
                if n < 0 && errno == EINTR { continue }
                return
            }
            onSignal(Int32(byte))
        }
        thread.name = "blobd-signals"
        thread.start()
    }
}
