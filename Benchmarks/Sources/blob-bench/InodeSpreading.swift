import Foundation
import Glibc

/// Makes new subfolders of a folder land in fresh ext4 block groups (`chattr +T`, the "top of a
/// directory hierarchy" flag), so files created in them get inodes nobody deleted recently.
///
/// Why: this disk is ext4 without a journal, and ext4 then skips inodes deleted in the last
/// 60–300 s when allocating, scanning past each one (`find_inode_bit` → `recently_deleted` in kernel
/// profiles). Folders normally inherit their parent's block group, and /tmp's group is full of such
/// inodes from every test run on the machine, so creating files there is many times slower than in a
/// folder whose parent has `+T` (docs/BENCHMARKS.md, "The machine"). Without this, every variant paid
/// the same large per-create penalty, which hid the differences the benchmark is about. With `+T`, ext4's Orlov
/// allocator spreads each new subfolder to a group with spare inodes.
///
/// Best effort: without `chattr` (or on another filesystem) nothing happens and figures are noisier.
enum InodeSpreading {
    /// Sets the flag on `folder`; returns whether `chattr` succeeded.
    @discardableResult
    static func mark(_ folder: String) -> Bool {
        let tool = "/usr/bin/chattr"
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["+T", folder]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus == 0
        } catch {
            return false
        }
    }
}

/// A quick check of how fast this filesystem creates files right now, reported with the results.
///
/// Files created in the minutes after a mass delete (a previous run's cleanup, another project's test
/// suite) can cost many times more than usual on this disk (see ``InodeSpreading``). That penalty is the
/// same for every variant, so it pulls all create-heavy ratios toward 1; the probe makes it visible.
enum CreateProbe {
    /// Creates `count` empty files in a fresh subfolder of `parent` (left for the run's cleanup) and
    /// returns files created per second.
    static func createsPerSecond(in parent: String, count: Int = 1000) -> Double {
        let folder = parent + "/probe-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil else { return 0 }
        let paths = (0..<count).map { folder + "/f\($0)" }
        let clock = ContinuousClock()
        let start = clock.now
        for path in paths {
            let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            if fd >= 0 { close(fd) }
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return Double(count) / max(seconds, 1e-9)
    }

    /// Below this, the probe warns: well under what a quiet run of this machine reaches (the probe's
    /// figure is printed under every table).
    static let slowThreshold = 15_000.0
}
