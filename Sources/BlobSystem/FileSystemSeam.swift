import Synchronization

/// A call through ``FileDescriptor`` or ``FileSystem`` that changes the file system, or what a
/// descriptor stands for (`open`, `close`), or that may wait for the disk to read (`pread`), as a
/// ``FileSystemHook`` sees it.
///
/// Paths are as the caller gave them; the store always passes absolute ones.
package enum FileSystemCall: Sendable, Equatable {
    /// `open(2)` of `path` with the raw `flags` (also `openat2(2)` with `RESOLVE_CACHED`:
    /// ``FileDescriptor/openIfCached(_:_:)``); `descriptor` is -1 before the call.
    case open(path: String, flags: Int32, descriptor: Int32)
    /// `close(2)`. Reported only before the call: after it, another thread may get the same number.
    case close(descriptor: Int32)
    /// `write(2)` at the descriptor's offset (`offset` nil) or `pwrite(2)` at `offset`, of `bytes`.
    /// After the call, `bytes` is what was written (a short write reports its part).
    case write(descriptor: Int32, offset: Int64?, bytes: [UInt8])
    /// `pread(2)` of up to `count` bytes at `offset`: the read that may wait for the disk, so tests
    /// can make the disk slow or failing. Reported only before the call. (A read that never waits,
    /// ``FileDescriptor/readIfCached(fromAbsoluteOffset:into:)``, is not reported.)
    case read(descriptor: Int32, offset: Int64, count: Int)
    /// `lseek(2)` to `offset`.
    case seek(descriptor: Int32, offset: Int64)
    /// `ftruncate(2)`.
    case resize(descriptor: Int32, size: Int64)
    /// `fdatasync(2)`.
    case dataSync(descriptor: Int32)
    /// `fsync(2)`, of a file or a folder.
    case sync(descriptor: Int32)
    /// `syncfs(2)`.
    case syncFileSystem(descriptor: Int32)
    /// `mkdir(2)`.
    case makeDirectory(path: String)
    /// `rmdir(2)`.
    case removeDirectory(path: String)
    /// `rename(2)`.
    case rename(from: String, to: String)
    /// `unlink(2)`.
    case unlink(path: String)
}

/// Sees every ``FileSystemCall`` this process makes while installed with ``FileSystemSeam/install(_:)``:
/// tests record a workload's mutations with it, or make a call fail.
///
/// Called on whatever thread makes the call, concurrently; an implementation guards its own state.
/// Calls of every store in the process arrive, so a recorder filters by path.
package protocol FileSystemHook: AnyObject, Sendable {
    /// Before the call: throwing makes the call fail with that error without being made.
    func willPerform(_ call: FileSystemCall) throws(Errno)
    /// After the call succeeded (never for ``FileSystemCall/close(descriptor:)`` and
    /// ``FileSystemCall/read(descriptor:offset:count:)``, reported before).
    func didPerform(_ call: FileSystemCall)
}

/// Where tests plug a ``FileSystemHook`` into the typed system-call wrappers.
///
/// When nothing is installed each wrapped call pays one relaxed atomic load and a branch; the call
/// descriptions (and a copy of written bytes) are only built while a hook is installed.
package enum FileSystemSeam {
    private static let active = Atomic<Bool>(false)
    /// Owned by its mutex.
    private static let hooks = Locked<[any FileSystemHook]>([])

    /// Starts reporting calls to `hook` (several may be installed; each sees every call).
    package static func install(_ hook: any FileSystemHook) {
        hooks.withLock { hooks in
            hooks.append(hook)
            active.store(true, ordering: .relaxed)
        }
    }

    /// Stops reporting calls to `hook`.
    package static func uninstall(_ hook: any FileSystemHook) {
        hooks.withLock { hooks in
            hooks.removeAll { $0 === hook }
            active.store(!hooks.isEmpty, ordering: .relaxed)
        }
    }

    /// Whether a hook is installed: the one check on the path of every wrapped call.
    @inline(__always)
    static var isActive: Bool { active.load(ordering: .relaxed) }

    /// Lets the installed hooks see `call` before it is made; rethrows the first refusal.
    static func willPerform(_ call: FileSystemCall) throws(Errno) {
        for hook in hooks.withLock({ $0 }) { try hook.willPerform(call) }
    }

    /// Tells the installed hooks that `call` succeeded.
    static func didPerform(_ call: FileSystemCall) {
        for hook in hooks.withLock({ $0 }) { hook.didPerform(call) }
    }
}

/// Makes `body`, the system call that `call` describes, between the installed hooks' two looks at it.
@inline(__always)
func observed(_ call: @autoclosure () -> FileSystemCall, _ body: () throws(Errno) -> Void) throws(Errno) {
    guard FileSystemSeam.isActive else { return try body() }
    let described = call()
    try FileSystemSeam.willPerform(described)
    try body()
    FileSystemSeam.didPerform(described)
}
