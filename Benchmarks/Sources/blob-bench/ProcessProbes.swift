import Foundation
import Glibc
import Synchronization

/// Samples a process's resident memory every few milliseconds on its own thread, keeping the largest
/// VmRSS seen: VmHWM alone says how high memory went over the process's whole life, the samples say
/// during which phase.
final class RSSSampler: Sendable {
    private let pid: pid_t
    private let interval: Duration
    private let peak = Atomic<Int>(0)
    private let samples = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling `/proc/pid/status` every `interval`.
    init(pid: pid_t, interval: Duration = .milliseconds(50)) {
        self.pid = pid
        self.interval = interval
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                if let status = ProcMemory(pid: pid) {
                    RSSSampler.raise(peak, to: status.residentBytes)
                    samples.add(1, ordering: .relaxed)
                }
                let (seconds, attoseconds) = interval.components
                usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            }
            finished.signal()
        }
        thread.name = "blob-bench-rss"
        thread.start()
    }

    /// Stops the thread (blocking until it has taken its last sample); returns the largest VmRSS seen
    /// (bytes) and how many samples were taken.
    func stop() -> (peakBytes: Int, samples: Int) {
        if running.exchange(false, ordering: .relaxed) { finished.wait() }
        return (peak.load(ordering: .relaxed), samples.load(ordering: .relaxed))
    }

    /// Raises `value` to `candidate` if that is larger.
    private static func raise(_ value: borrowing Atomic<Int>, to candidate: Int) {
        var current = value.load(ordering: .relaxed)
        while candidate > current {
            let (exchanged, original) = value.compareExchange(expected: current, desired: candidate, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}


/// Resident memory and threads of a process from `/proc/PID/status` (the kernel separates each
/// name from its value with a tab: `VmRSS:\t    5432 kB`).
struct ProcMemory: Sendable {
    /// VmRSS, bytes.
    var residentBytes: Int
    /// VmHWM (peak resident set over the process's life), bytes.
    var peakResidentBytes: Int
    var threads: Int

    /// Reads `/proc/pid/status`; `nil` if the process is gone.
    init?(pid: pid_t) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var rss: Int?
        var hwm: Int?
        var threads: Int?
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon]
            guard key == "VmRSS" || key == "VmHWM" || key == "Threads" else { continue }
            let number = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            switch key {
            case "VmRSS": rss = number.map { $0 * 1024 }
            case "VmHWM": hwm = number.map { $0 * 1024 }
            default: threads = number
            }
        }
        guard let rss, let hwm, let threads else { return nil }
        residentBytes = rss
        peakResidentBytes = hwm
        self.threads = threads
    }
}

/// Free space and inodes of the filesystem holding a folder, checked before scenarios that need a lot of both.
struct DiskSpace: Sendable {
    /// Bytes an unprivileged process may still use.
    var availableBytes: Int64
    /// Inodes an unprivileged process may still use.
    var availableInodes: Int64

    /// `statvfs` of `path`; `nil` if that fails.
    init?(path: String) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        availableBytes = Int64(info.f_bavail) * Int64(info.f_frsize)
        availableInodes = Int64(info.f_favail)
    }

    /// A sentence saying what is missing, or `nil` when at least `bytes` and `inodes` are free.
    func shortfall(bytes: Int64, inodes: Int64) -> String? {
        var missing: [String] = []
        if availableBytes < bytes { missing.append("\(DiskSpace.gibibytes(bytes)) free (have \(DiskSpace.gibibytes(availableBytes)))") }
        if availableInodes < inodes { missing.append("\(inodes) free inodes (have \(availableInodes))") }
        return missing.isEmpty ? nil : "needs " + missing.joined(separator: " and ")
    }

    /// `12.3 GiB`.
    static func gibibytes(_ bytes: Int64) -> String {
        "\(Report.fixed(Double(bytes) / Double(1 << 30))) GiB"
    }
}

/// The soft limit on open descriptors, raised when a scenario holds many connections.
enum FileLimit {
    /// Raises the soft `RLIMIT_NOFILE` to at least `needed` (capped by the hard limit); returns the soft
    /// limit in force afterwards. Children started later (the daemon) inherit it.
    @discardableResult
    static func raise(to needed: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < rlim_t(needed) {
            let wanted = min(rlim_t(needed), limit.rlim_max)
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is all ones (Swift cannot import the macro's -1 as unsigned).
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }
}

/// This executable re-run with a hidden subcommand, its standard output captured: the honest way to
/// time a store's start-up, since a fresh process has no registry, cache or warm engine to help it.
enum ChildRun {
    /// What a child reported.
    struct Outcome: Sendable {
        var status: Int32
        var output: String
        /// From just before `posix_spawn` to the child's exit, as seen by the parent.
        var wallTime: Duration

        /// The values of a `key=value key=value` line the child printed.
        var fields: [String: String] {
            var result: [String: String] = [:]
            for token in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                let parts = token.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
            }
            return result
        }
    }

    /// Runs `blob-bench ARGUMENTS` and waits for it (blocking: call from a dedicated thread).
    /// Standard error passes through (the child's progress and errors show in the bench's).
    static func run(_ arguments: [String]) throws -> Outcome {
        let executable = BenchDaemon.executablePath()
        var pipeEnds: [Int32] = [0, 0]
        // pipe2 is not in Swift's Glibc module; close-on-exec is set right after (children are spawned
        // one at a time, so no other spawn can inherit these in between).
        guard pipe(&pipeEnds) == 0 else { throw BenchFailure("\(SystemError.current("pipe"))") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        defer { close(readEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy, so only standard output reaches the child.
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        var cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        let clock = ContinuousClock()
        let started = clock.now
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, nil, &cArguments, environ)
        close(writeEnd)
        guard status == 0 else { throw BenchFailure("cannot start \(executable) \(arguments.first ?? ""): errno \(status)") }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                output += chunk[..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        var exitStatus: Int32 = 0
        while waitpid(child, &exitStatus, 0) < 0 && errno == EINTR {}
        let elapsed = started.duration(to: clock.now)
        // WEXITSTATUS/WIFEXITED are macros Swift cannot see: decode the wait status by hand.
        let code = (exitStatus & 0x7f) == 0 ? (exitStatus >> 8) & 0xff : 128 + (exitStatus & 0x7f)
        return Outcome(status: code, output: String(decoding: output, as: UTF8.self), wallTime: elapsed)
    }

    /// `duration` in milliseconds.
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) * 1e-15
    }
}

/// Runs one blocking job on a new thread and returns its result to async code (the cooperative pool
/// has 2 threads here; a job blocked in `waitpid`, `recv` or `usleep` must not sit on one of them).
enum DedicatedThread {
    /// Runs `body` on its own thread and returns what it returns (or rethrows what it throws).
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let box = Locked<T?>(nil)
        try await Workers.run(1) { _ in
            let value = try body()
            box.withLock { $0 = value }
        }
        guard let value = box.withLock({ $0 }) else { throw BenchFailure("a blocking job finished without a result") }
        return value
    }
}
