import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the calls that concern one folder (by path, or by a descriptor opened there), and fails the ones `refuse` picks.
private final class FolderHook: FileSystemHook, @unchecked Sendable {
    let folder: String
    let refuse: @Sendable (FileSystemCall) -> Errno?
    private let state = Locked<(calls: [FileSystemCall], descriptors: Set<Int32>)>(([], []))

    init(folder: String, refuse: @escaping @Sendable (FileSystemCall) -> Errno? = { _ in nil }) {
        self.folder = folder
        self.refuse = refuse
    }

    var calls: [FileSystemCall] { state.withLock { $0.calls } }

    private func concerns(_ call: FileSystemCall, _ descriptors: Set<Int32>) -> Bool {
        switch call {
        case .open(let path, _, _), .makeDirectory(let path), .removeDirectory(let path), .unlink(let path),
            .rename(let path, _):
            return path.hasPrefix(folder)
        case .close(let fd), .write(let fd, _, _), .seek(let fd, _), .resize(let fd, _), .dataSync(let fd), .sync(let fd),
            .syncFileSystem(let fd):
            return descriptors.contains(fd)
        case .read:
            return false  // the reads' own test watches them
        }
    }

    func willPerform(_ call: FileSystemCall) throws(Errno) {
        let mine = state.withLock { state in
            guard concerns(call, state.descriptors) else { return false }
            if case .close(let fd) = call {
                state.descriptors.remove(fd)
                state.calls.append(call)
            }
            return true
        }
        if mine, let error = refuse(call) { throw error }
    }

    func didPerform(_ call: FileSystemCall) {
        state.withLock { state in
            guard concerns(call, state.descriptors) else { return }
            switch call {
            case .open(_, _, let fd): state.descriptors.insert(fd)
            default: break
            }
            state.calls.append(call)
        }
    }
}

@Suite struct FileSystemSeamTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "blobsystem-seam-" + UUID().uuidString
        try FileSystem.makeDirectories(folder)
    }

    /// Every mutation made through the wrappers reaches an installed hook, in order, with its paths,
    /// offsets and bytes; nothing does once it is uninstalled.
    @Test func aHookSeesEveryMutationInOrder() throws {
        let hook = FolderHook(folder: folder)
        FileSystemSeam.install(hook)
        let fd: FileDescriptor
        do {
            defer { FileSystemSeam.uninstall(hook) }
            try FileSystem.makeDirectory(folder + "/d")
            fd = try FileDescriptor.open(folder + "/d/f", [.readWrite, .create, .exclusive])
            try ([1, 2, 3] as [UInt8]).withUnsafeBytes { try fd.writeAll($0) }
            try ([9] as [UInt8]).withUnsafeBytes { try fd.writeAll(toAbsoluteOffset: 1, $0) }
            try fd.resize(to: 2)
            try fd.dataSync()
            try fd.sync()
            try fd.close()
            try FileSystem.rename(folder + "/d/f", to: folder + "/d/g")
            try FileSystem.rename(folder + "/d/g", to: folder + "/d/h")
            try FileSystem.unlink(folder + "/d/h")
            try FileSystem.syncDirectory(folder + "/d")
        }
        let path = folder + "/d/f"
        let calls = hook.calls
        #expect(calls.count == 14, "\(calls)")
        guard calls.count == 14, case .open(path, let flags, let opened) = calls[1] else { return }
        #expect(flags & O_CREAT != 0 && opened == fd.rawValue)
        #expect(calls[0] == .makeDirectory(path: folder + "/d"))
        #expect(calls[2] == .write(descriptor: opened, offset: nil, bytes: [1, 2, 3]))
        #expect(calls[3] == .write(descriptor: opened, offset: 1, bytes: [9]))
        #expect(calls[4] == .resize(descriptor: opened, size: 2))
        #expect(calls[5] == .dataSync(descriptor: opened))
        #expect(calls[6] == .sync(descriptor: opened))
        #expect(calls[7] == .close(descriptor: opened))
        #expect(calls[8] == .rename(from: path, to: folder + "/d/g"))
        #expect(calls[9] == .rename(from: folder + "/d/g", to: folder + "/d/h"))
        #expect(calls[10] == .unlink(path: folder + "/d/h"))
        guard case .open(folder + "/d", _, let directory) = calls[11] else {
            Issue.record("\(calls[11])")
            return
        }
        #expect(calls[12] == .sync(descriptor: directory))
        #expect(calls[13] == .close(descriptor: directory))

        try FileSystem.makeDirectory(folder + "/e")
        #expect(hook.calls.count == 14, "an uninstalled hook sees nothing")
    }

    /// A hook that refuses a call makes it fail with its errno, and the call is not made.
    @Test func aHookCanFailACallWithoutItBeingMade() throws {
        let hook = FolderHook(folder: folder) { call in
            switch call {
            case .rename, .dataSync: return Errno(rawValue: EIO)
            default: return nil
            }
        }
        let path = folder + "/f"
        let fd = try FileDescriptor.open(path, [.readWrite, .create, .exclusive])
        FileSystemSeam.install(hook)
        defer { FileSystemSeam.uninstall(hook) }
        #expect(throws: Errno(rawValue: EIO)) { try FileSystem.rename(path, to: folder + "/g") }
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: folder + "/g"))
        try fd.close()
        // A descriptor opened in the folder while the hook is installed counts as the folder's.
        let other = try FileDescriptor.open(path, [.readWrite])
        defer { try? other.close() }
        #expect(throws: Errno(rawValue: EIO)) { try other.dataSync() }
        #expect(hook.calls.filter { if case .rename = $0 { true } else { false } }.isEmpty, "a refused call is not reported as made")
    }
    /// A `pread` is reported before it is made, with its descriptor, offset and length, and a hook
    /// can fail it (a damaged disk) or hold it (a slow one); a read that never waits is not reported.
    @Test func readsThatMayWaitAreReportedAndCanBeRefused() throws {
        let path = folder + "/r"
        let fd = try FileDescriptor.open(path, [.readWrite, .create, .exclusive])
        defer { try? fd.close() }
        try ([1, 2, 3, 4] as [UInt8]).withUnsafeBytes { try fd.writeAll($0) }
        let hook = ReadHook(descriptor: fd.rawValue)
        FileSystemSeam.install(hook)
        defer { FileSystemSeam.uninstall(hook) }
        var buffer = [UInt8](repeating: 0, count: 3)
        let read = try buffer.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 1, into: $0) }
        #expect(read == 3 && buffer == [2, 3, 4])
        #expect(hook.reads == [.read(descriptor: fd.rawValue, offset: 1, count: 3)])
        _ = try? buffer.withUnsafeMutableBytes { try fd.readIfCached(fromAbsoluteOffset: 0, into: $0) }
        #expect(hook.reads.count == 1, "a read that never waits for the disk is not reported")
        hook.refuse()
        #expect(throws: Errno(rawValue: EIO)) { try buffer.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 0, into: $0) } }
    }
}

/// Records the reads of one descriptor, and fails them with `EIO` once told to. Owned by its lock.
private final class ReadHook: FileSystemHook {
    private let descriptor: Int32
    private let state = Locked<(reads: [FileSystemCall], refusing: Bool)>(([], false))

    init(descriptor: Int32) { self.descriptor = descriptor }

    var reads: [FileSystemCall] { state.withLock { $0.reads } }
    func refuse() { state.withLock { $0.refusing = true } }

    func willPerform(_ call: FileSystemCall) throws(Errno) {
        guard case .read(descriptor, _, _) = call else { return }
        let refusing = state.withLock { state in
            state.reads.append(call)
            return state.refusing
        }
        if refusing { throw Errno(rawValue: EIO) }
    }

    func didPerform(_ call: FileSystemCall) {}
}
