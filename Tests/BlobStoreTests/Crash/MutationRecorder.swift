import BlobSystem
import Foundation

/// Records, in order, every file-system mutation made under one folder (through ``FileSystemSeam``),
/// interleaved with the workload's own marks; can also make chosen calls fail.
///
/// The seam reports the calls of every store in the test process, so calls are kept only when they
/// name a path under `root` or a descriptor opened there. A `close` is reported before the call, so
/// a number is forgotten before another thread can get it again.
final class MutationRecorder: FileSystemHook, @unchecked Sendable {
    /// One step of the recording.
    enum Entry: Sendable {
        case call(FileSystemCall)
        /// The workload started operation `index` (before any of its calls).
        case submitted(Int)
        /// Operation `index` returned success.
        case acknowledged(Int)
    }

    /// The folder (with a trailing `/`) whose calls are kept.
    let root: String
    /// Owned by its mutex: the recording, and the descriptors opened under `root` that are still open.
    private let state = Locked<(entries: [Entry], open: [Int32: String])>(([], [:]))
    /// Owned by its mutex: decides, for a kept call and the path it concerns, whether it fails.
    private let failure = Locked<(@Sendable (FileSystemCall, String) -> Errno?)?>(nil)

    init(root: String) { self.root = root.hasSuffix("/") ? root : root + "/" }

    var entries: [Entry] { state.withLock { $0.entries } }

    func mark(_ entry: Entry) { state.withLock { $0.entries.append(entry) } }

    /// From now on, a kept call for which `decide` returns an errno fails with it instead of being made.
    func failCalls(_ decide: (@Sendable (FileSystemCall, String) -> Errno?)?) { failure.withLock { $0 = decide } }

    private func isUnder(_ path: String) -> Bool { path.hasPrefix(root) || path + "/" == root }

    /// The path a kept call concerns (a descriptor's: the path it was opened with), or nil for another folder's call.
    private func keptPath(_ call: FileSystemCall, open: [Int32: String]) -> String? {
        switch call {
        case .open(let path, _, _), .makeDirectory(let path), .removeDirectory(let path), .unlink(let path):
            return isUnder(path) ? path : nil
        case .rename(let from, let to):
            return isUnder(from) || isUnder(to) ? to : nil
        case .close(let descriptor), .write(let descriptor, _, _), .seek(let descriptor, _), .resize(let descriptor, _),
            .dataSync(let descriptor), .sync(let descriptor), .syncFileSystem(let descriptor):
            return open[descriptor]
        case .read:
            return nil  // changes nothing on disk
        }
    }

    func willPerform(_ call: FileSystemCall) throws(Errno) {
        let path: String? = state.withLock { state in
            let path = keptPath(call, open: state.open)
            if path != nil, case .close(let descriptor) = call {
                state.open[descriptor] = nil
                state.entries.append(.call(call))
            }
            return path
        }
        guard let path, let decide = failure.withLock({ $0 }) else { return }
        if let error = decide(call, path) { throw error }
    }

    func didPerform(_ call: FileSystemCall) {
        state.withLock { state in
            guard keptPath(call, open: state.open) != nil else { return }
            switch call {
            case .open(let path, _, let descriptor): state.open[descriptor] = path
            default: break
            }
            state.entries.append(.call(call))
        }
    }
}
