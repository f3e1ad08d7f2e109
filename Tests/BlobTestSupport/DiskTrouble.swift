import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Disk trouble for the tests that make it: programs run to completion, a small tmpfs (root only),
// free space.

/// Runs a program to completion; its status and combined output.
@discardableResult
package func runCommand(_ path: String, _ arguments: [String]) -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    do { try process.run() } catch { return (-1, "\(error)") }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}

/// A small tmpfs mounted on a folder (root only), unmounted on `unmount()` or deinit.
package final class TmpfsMount {
    /// The mount point.
    package let path: String
    private var mounted = true

    /// nil (and a printed reason) when mounting is not possible here.
    package static func make(at path: String, size: String, test: String) -> TmpfsMount? {
        guard geteuid() == 0 else {
            print("\(test): skipped: needs root to mount a tmpfs (running as uid \(geteuid()))")
            return nil
        }
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", path])
        guard result.status == 0 else {
            print("\(test): skipped: mount -t tmpfs failed: \(result.output)")
            return nil
        }
        return TmpfsMount(path: path)
    }

    private init(path: String) { self.path = path }

    /// Remounts it read-only or read-write; whether that worked.
    package func remount(readOnly: Bool) -> Bool {
        runCommand("/bin/mount", ["-o", readOnly ? "remount,ro" : "remount,rw", path]).status == 0
    }

    /// Unmounts it (lazily if it is busy).
    package func unmount() {
        guard mounted else { return }
        mounted = false
        if runCommand("/bin/umount", [path]).status != 0 { runCommand("/bin/umount", ["-l", path]) }
    }

    deinit { unmount() }
}

/// Bytes an unprivileged writer may still use on the filesystem that holds `path` (-1 if unknown).
package func availableBytes(_ path: String) -> Int64 {
    var status = statvfs()
    guard statvfs(path, &status) == 0 else { return -1 }
    return Int64(status.f_bavail) * Int64(status.f_frsize)
}

/// Polls `condition` for up to `seconds`; whether it held.
package func eventually(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
