import Foundation
import Glibc
import Synchronization

/// Starting peer servers and tools (nginx, redis-server, redis-benchmark) as child processes, and
/// making sure none outlives `blob-bench`.
///
/// Each child gets its own process group, so that stopping it also stops what it forks (nginx's
/// workers). Every live child is remembered in ``ChildReaper``, which kills them all at exit and on
/// SIGINT/SIGTERM/SIGHUP, whatever path the run takes.
enum ChildProcess {
    /// Starts `arguments` (`arguments[0]` is the executable's path) in a new process group with a
    /// default signal disposition and mask; stdin is /dev/null, stdout goes to `stdout` if given (a
    /// descriptor to duplicate) else /dev/null, stderr to `stderrPath` (appended) else /dev/null.
    /// The child is registered with ``ChildReaper``.
    static func spawn(_ arguments: [String], stdout: Int32? = nil, stderrPath: String? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let stdout {
            posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Signals this process ignores or blocks (SIGPIPE, …) would otherwise be inherited by the child.
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, &attributes, &cArguments, environ)
        guard status == 0 else { throw BenchFailure("cannot start \(arguments[0]): \(String(cString: strerror(status)))") }
        ChildReaper.track(pid, group: true)
        return pid
    }

    /// Runs `arguments` to completion and returns its exit status and standard output. Blocking: call
    /// it from a dedicated thread (``Workers``) when it may take long.
    static func output(_ arguments: [String], stderrPath: String? = nil) throws -> (status: Int32, output: String) {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw BenchFailure("pipe: \(String(cString: strerror(errno)))") }
        // Close-on-exec, so other children never hold the write end open (the read would never end).
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        let pid: pid_t
        do {
            pid = try spawn(arguments, stdout: pipeEnds[1], stderrPath: stderrPath)
        } catch {
            close(pipeEnds[0])
            close(pipeEnds[1])
            throw error
        }
        close(pipeEnds[1])
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        close(pipeEnds[0])
        let status = reap(pid)
        return (status, String(decoding: bytes, as: UTF8.self))
    }

    /// Waits for `pid` to exit and returns its exit status (128 + signal if killed); unregisters it.
    @discardableResult
    static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        ChildReaper.untrack(pid)
        // WIFEXITED / WEXITSTATUS are macros Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Stops the process group led by `pid`: `signal` (a graceful stop), then SIGKILL to the whole
    /// group after `grace`; reaps the leader and unregisters it.
    static func stop(_ pid: pid_t, signal: Int32 = SIGTERM, grace: Duration = .seconds(5)) {
        kill(pid, signal)
        let deadline = ContinuousClock.now + grace
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                // Anything the leader forked and left behind (nginx workers are normally gone by now).
                kill(-pid, SIGKILL)
                ChildReaper.untrack(pid)
                return
            }
            usleep(2_000)
        }
        kill(-pid, SIGKILL)
        _ = reap(pid)
    }

    /// Polls until something accepts connections on `socketPath`; throws if `pid` exits first or
    /// nothing accepts within `timeout`. `log` is shown in the error.
    static func waitUntilAccepting(_ socketPath: String, pid: pid_t, what: String, log: String?, timeout: Duration = .seconds(20)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let socket = try? Socket.connect(path: socketPath) {
                socket.close()
                return
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                ChildReaper.untrack(pid)
                throw BenchFailure("\(what) exited during start-up (status \(status))\(tail(log))")
            }
            usleep(2_000)
        }
        stop(pid, signal: SIGKILL)
        throw BenchFailure("\(what) did not accept connections on \(socketPath) within \(timeout)\(tail(log))")
    }

    /// The last lines of the log at `path`, for error messages.
    private static func tail(_ path: String?) -> String {
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty else { return "" }
        return ": " + text.split(separator: "\n").suffix(3).joined(separator: " | ")
    }

    /// The first executable called `name` on PATH or in the sbin folders (where apt puts nginx).
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        return folders.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
    }
}

/// Every child process still alive, killed when `blob-bench` exits or is interrupted.
///
/// The table is a fixed array of process ids read by a signal handler, so it is plain memory: a
/// handler may not take locks. Writers serialise on a mutex; a handler racing a registration can at
/// worst miss that one child, which the regular stop path still reaps.
enum ChildReaper {
    private static let capacity = 64
    /// Process ids; negative for a process-group leader (kill the whole group). 0 is a free slot.
    nonisolated(unsafe) private static let slots: UnsafeMutablePointer<pid_t> = {
        let slots = UnsafeMutablePointer<pid_t>.allocate(capacity: capacity)
        slots.initialize(repeating: 0, count: capacity)
        return slots
    }()
    private static let writers = Mutex<Bool>(false)

    /// Remembers `pid` (and its process group when `group`).
    static func track(_ pid: pid_t, group: Bool) {
        installHandlers()
        writers.withLock { _ in
            for index in 0..<capacity where slots[index] == 0 {
                slots[index] = group ? -pid : pid
                return
            }
        }
    }

    /// Forgets `pid` (it has been reaped).
    static func untrack(_ pid: pid_t) {
        writers.withLock { _ in
            for index in 0..<capacity where slots[index] == pid || slots[index] == -pid { slots[index] = 0 }
        }
    }

    /// Stops and reaps every remembered child. Async-signal-safe (`kill`, `waitpid`, `usleep` only):
    /// process-group leaders first get SIGTERM, so nginx's master stops and reaps its own workers
    /// (killed all at once, the workers would be left as zombies of init); whatever is still there
    /// after 2 s, and every plain child, gets SIGKILL. Reaping here means no zombie outlives us either.
    static func killAll() {
        for index in 0..<capacity {
            let entry = slots[index]
            if entry < 0 { kill(-entry, SIGTERM) } else if entry > 0 { kill(entry, SIGKILL) }
        }
        for _ in 0..<1000 {
            var waiting = false
            for index in 0..<capacity {
                let entry = slots[index]
                guard entry != 0 else { continue }
                let pid = entry < 0 ? -entry : entry
                if waitpid(pid, nil, WNOHANG) == 0 { waiting = true } else { slots[index] = 0 }
            }
            if !waiting { return }
            usleep(2_000)
        }
        for index in 0..<capacity {
            let entry = slots[index]
            guard entry != 0 else { continue }
            kill(entry, SIGKILL)  // a negative entry: the whole group
            _ = waitpid(entry < 0 ? -entry : entry, nil, 0)
            slots[index] = 0
        }
    }

    /// Paths removed by the signal hook after the children are gone (socket files first, then their
    /// folder): C strings made once, because a handler may not allocate.
    private static let leftoverCapacity = 512
    nonisolated(unsafe) private static let leftovers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let table = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: leftoverCapacity)
        table.initialize(repeating: nil, count: leftoverCapacity)
        return table
    }()

    /// Removes `path` (a file, or an empty folder registered after its files) if the run is interrupted.
    static func removeOnSignal(_ path: String) {
        installHandlers()
        writers.withLock { _ in
            for index in 0..<leftoverCapacity where leftovers[index] == nil {
                leftovers[index] = strdup(path)
                return
            }
        }
    }

    /// Forgets every path under `prefix` (the run removed them itself).
    static func keep(under prefix: String) {
        writers.withLock { _ in
            for index in 0..<leftoverCapacity {
                guard let path = leftovers[index], String(cString: path).hasPrefix(prefix) else { continue }
                free(path)
                leftovers[index] = nil
            }
        }
    }

    /// Unlinks or removes the registered paths, newest first (async-signal-safe).
    private static func removeLeftovers() {
        for index in stride(from: leftoverCapacity - 1, through: 0, by: -1) {
            guard let path = leftovers[index] else { continue }
            if unlink(path) != 0 { rmdir(path) }
        }
    }

    /// Installs the exit and signal hooks, once.
    static func installHandlers() {
        writers.withLock { installed in
            guard !installed else { return }
            installed = true
            atexit { ChildReaper.killAll() }
            for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
                signal(signalNumber) { received in
                    ChildReaper.killAll()
                    ChildReaper.removeLeftovers()
                    // Then die of the same signal, as without the handler.
                    signal(received, SIG_DFL)
                    raise(received)
                }
            }
        }
    }
}
