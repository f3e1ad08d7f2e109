import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which store folders another process holds, found without taking (or even trying) their locks.
///
/// A store's lock is an exclusive `flock` on `STORE/.lock`. Trying to take it to see whether it is
/// free would hold it for a moment, and another process opening the store at that moment would be
/// refused; the kernel's list of held locks (`/proc/locks`) says who holds it without touching it.
enum StoreLockHolders {
    /// One held `flock`: the file's device and inode, and the holder's pid.
    private struct HeldLock: Hashable {
        var major: UInt64
        var minor: UInt64
        var inode: UInt64
    }

    /// For each of `names` (store folders under `root`) whose lock another process holds, that
    /// process (`pid N`). Empty when the kernel's lock list cannot be read. Blocking: call off the
    /// event loops and the concurrency pool.
    static func holders(of names: [String], root: String) -> [String: String] {
        guard !names.isEmpty, let table = kernelLockTable() else { return [:] }
        var held: [HeldLock: Int32] = [:]
        let ownPID = getpid()
        for line in table.split(separator: "\n") {
            // "12: FLOCK  ADVISORY  WRITE 6048 fe:00:16224240 0 EOF"; waiters ("12: -> FLOCK …") hold nothing.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", let pid = Int32(fields[4]), pid != ownPID else { continue }
            let device = fields[5].split(separator: ":")
            guard device.count == 3, let major = UInt64(device[0], radix: 16), let minor = UInt64(device[1], radix: 16),
                let inode = UInt64(device[2])
            else { continue }
            held[HeldLock(major: major, minor: minor, inode: inode)] = pid
        }
        var result: [String: String] = [:]
        for name in names {
            var status = stat()
            guard stat(root + "/" + name + "/.lock", &status) == 0 else { continue }
            let device = UInt64(status.st_dev)
            // glibc's encoding of a device number (`gnu_dev_major`/`gnu_dev_minor`, macros Swift cannot import).
            let major = ((device >> 8) & 0xfff) | ((device >> 32) & 0xffff_f000)
            let minor = (device & 0xff) | ((device >> 12) & 0xffff_ff00)
            if let pid = held[HeldLock(major: major, minor: minor, inode: UInt64(status.st_ino))] {
                result[name] = "pid \(pid)"
            }
        }
        return result
    }

    /// `/proc/locks` read to its end. The file reports a size of 0 and is generated a page at a
    /// time, so it is read in a loop until `read` returns 0 rather than by a size-based reader.
    private static func kernelLockTable() -> String? {
        guard let file = try? FileDescriptor.open("/proc/locks", [.readOnly]) else { return nil }
        return file.closeAfter { () -> String? in
            var bytes: [UInt8] = []
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
            defer { buffer.deallocate() }
            while true {
                guard let count = try? file.read(into: buffer) else { return nil }
                if count == 0 { break }
                bytes.append(contentsOf: buffer[..<count])
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
