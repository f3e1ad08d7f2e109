import Glibc

/// CPU time used by server processes, to report CPU per request beside throughput.
///
/// Read from `/proc/PID/task/TID/schedstat` (nanoseconds on CPU, user and kernel together) rather
/// than `/proc/PID/stat` (10 ms ticks, too coarse for a run of a second). Includes a process's
/// children as listed in `/proc/PID/task/PID/children`, which is how nginx's workers are found.
enum ProcessCPU {
    /// Nanoseconds on CPU so far of every thread of `pids` and of their direct children.
    static func nanoseconds(_ pids: [pid_t]) -> UInt64 {
        var total: UInt64 = 0
        for pid in pids {
            total += threads(of: pid)
            for child in children(of: pid) { total += threads(of: child) }
        }
        return total
    }

    /// Sum over the threads of `pid`.
    private static func threads(of pid: pid_t) -> UInt64 {
        guard let tasks = try? Files.entries(of: "/proc/\(pid)/task") else { return 0 }
        var total: UInt64 = 0
        for task in tasks {
            if let text = read("/proc/\(pid)/task/\(task.name)/schedstat"),
                let first = text.split(separator: " ").first, let value = UInt64(first)
            {
                total += value
            }
        }
        return total
    }

    /// Direct children of `pid` (from its main thread's list).
    static func children(of pid: pid_t) -> [pid_t] {
        guard let text = read("/proc/\(pid)/task/\(pid)/children") else { return [] }
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) }
    }

    /// How many sockets `pid` has open (entries of `/proc/PID/fd` that link to `socket:[…]`).
    static func openSockets(_ pid: pid_t) -> Int {
        guard let entries = try? Files.entries(of: "/proc/\(pid)/fd") else { return 0 }
        var count = 0
        var target = [CChar](repeating: 0, count: 64)
        for entry in entries {
            let length = readlink("/proc/\(pid)/fd/\(entry.name)", &target, target.count)
            if length >= 7, String(decoding: target[..<7].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "socket:" { count += 1 }
        }
        return count
    }

    /// A small /proc file's text, or nil.
    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
