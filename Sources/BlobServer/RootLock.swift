import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one-daemon-per-root rule: an exclusive `flock` on `ROOT/.blobd.lock`, which holds `pid N`
/// so a second daemon can say who is in the way. The kernel drops the lock when the process dies,
/// so a crash never leaves a stale lock behind.
struct RootLock {
    let descriptor: FileDescriptor

    static func acquire(root: String) throws -> RootLock {
        let path = root + "/.blobd.lock"
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, [.readWrite, .create], permissions: 0o600) } catch {
            throw StartupError("cannot open \(path): \(error)")
        }
        let locked: Bool
        do { locked = try fd.lock(exclusive: true, nonBlocking: true) } catch {
            try? fd.close()
            throw StartupError("cannot lock \(path): \(error)")
        }
        guard locked else {
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = (try? buffer.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 0, into: $0) }) ?? 0
            let holder = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            try? fd.close()
            throw StartupError("another blobd (\(holder.isEmpty ? "pid unknown" : holder)) is already serving \(root)")
        }
        let text = Array("pid \(getpid())\n".utf8)
        try? fd.resize(to: 0)
        _ = text.withUnsafeBytes { try? fd.writeAll(toAbsoluteOffset: 0, $0) }
        return RootLock(descriptor: fd)
    }
}
