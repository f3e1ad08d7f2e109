internal import BlobSystem
import Dispatch

/// What one sync of a commit makes durable.
enum SyncTarget: Hashable, Sendable {
    /// A file's content (`fdatasync`), named by path.
    case content(String)
    /// A folder's entries (`fsync` of the folder).
    case folder(String)

    var path: String {
        switch self {
        case .content(let path), .folder(let path): return path
        }
    }

    /// Makes the sync; the error names the operation, the path and the errno.
    func sync() throws {
        switch self {
        case .content(let path):
            try io("sync", path) {
                let fd = try FileDescriptor.open(path, [.readOnly])
                try fd.closeAfter { () throws(Errno) in try fd.dataSync() }
            }
        case .folder(let path):
            try io("sync folder", path) { try FileSystem.syncDirectory(path) }
        }
    }
}

/// Makes a group commit's syncs side by side: each file's content with its own `fdatasync`, each
/// folder with its own `fsync`, all in flight at once.
///
/// Why not one `syncfs`: FUSE passes `syncfs` to virtiofs only, so on every other FUSE file system
/// it returns success having flushed nothing, and elsewhere it also waits for every other program's
/// dirty pages. Why side by side: a journalling file system (ext4's jbd2, XFS's log) commits the
/// metadata of syncs that wait at the same time in one journal transaction and one device flush, so
/// a batch still pays about one flush, not one per file.
///
/// Owns a few serial queues. A serial queue runs on a thread of its own when it has work, however
/// many are already busy, so syncs blocked in the kernel never starve the concurrency pool or each
/// other; idle queues hold no thread.
final class SyncRound: Sendable {
    private let lanes: [DispatchQueue]

    init(label: String, width: Int = 15) {
        lanes = (0..<width).map { DispatchQueue(label: label + ".sync\($0)", qos: .default) }
    }

    /// Makes every sync of `targets`; the calling thread takes one share. Returns each failed target's error.
    func run(_ targets: [SyncTarget]) -> [SyncTarget: any Error] {
        switch targets.count {
        case 0:
            return [:]
        case 1:
            do { try targets[0].sync() } catch { return [targets[0]: error] }
            return [:]
        default:
            let width = min(targets.count, lanes.count + 1)
            let failures = Locked<[SyncTarget: any Error]>([:])
            let share = { @Sendable (lane: Int) in
                for index in stride(from: lane, to: targets.count, by: width) {
                    do { try targets[index].sync() } catch { failures.withLock { $0[targets[index]] = error } }
                }
            }
            let group = DispatchGroup()
            for lane in 1..<width { lanes[lane - 1].async(group: group) { share(lane) } }
            share(0)
            group.wait()
            return failures.withLock { $0 }
        }
    }
}
