import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one-daemon-per-root rule: an exclusive `flock` on `ROOT/.blobd.lock`, which holds `pid N`
/// so a second daemon can say who is in the way, and then `socket PATH` so a library that finds a
/// store held by this daemon can reach it there (`BlobStores.open` in BlobClient). The kernel drops
/// the lock when the process dies, so a crash never leaves a stale lock behind.
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
            // The first line names the holder (`pid N`); the socket line after it is not for this sentence.
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            let holder = (text.split(separator: "\n").first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
            try? fd.close()
            throw StartupError("another blobd (\(holder.isEmpty ? "pid unknown" : holder)) is already serving \(root)")
        }
        let text = Array(pidLine.utf8)
        try? fd.resize(to: 0)
        _ = text.withUnsafeBytes { try? fd.writeAll(toAbsoluteOffset: 0, $0) }
        return RootLock(descriptor: fd)
    }

    private static var pidLine: String { "pid \(getpid())\n" }

    /// Adds the socket this daemon serves (`socket PATH`, the second line) before it accepts a
    /// connection, so before any store is opened: a process finding a store held by this daemon's
    /// pid then finds it here.
    /// Appended after the pid line, which stays in place throughout. A path that is not absolute,
    /// or holds a line break, is left out (nobody could use it).
    func record(socket path: String) {
        guard path.hasPrefix("/"), !path.contains("\n") else { return }
        let line = Array("socket \(path)\n".utf8)
        _ = line.withUnsafeBytes { try? descriptor.writeAll(toAbsoluteOffset: Int64(Self.pidLine.utf8.count), $0) }
    }

    /// The path a listening Unix socket (such as one passed by systemd) is bound to, or nil for an
    /// unnamed or abstract one.
    static func boundPath(of socket: FileDescriptor) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket.rawValue, $0, &length) }
        }
        guard result == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let pathLength = Int(length) - MemoryLayout.offset(of: \sockaddr_un.sun_path)!
        guard pathLength > 1 else { return nil }
        let bytes = withUnsafeBytes(of: address.sun_path) { Array($0.prefix(pathLength)) }
        guard bytes.first != 0 else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}
