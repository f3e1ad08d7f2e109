import Glibc

/// Frees the space a run used without deleting its files until the very end of the whole run.
///
/// Why not delete at once: this disk is ext4 *without a journal*, and ext4 then refuses to reuse an
/// inode deleted in the last 60–300 s, scanning past every such inode on each file creation (see
/// ``InodeSpreading``). Deleting thousands of files between variants made the next variants' creates
/// cost hundreds of microseconds each, more as the run went on. Truncating to zero frees the blocks (and their TRIMs happen here, untimed) but keeps the
/// inodes allocated; ``removeAll(_:)`` deletes everything once nothing is timed any more.
enum Cleanup {
    /// Truncates every regular file under `path` to zero bytes; folders and names stay.
    static func release(_ path: String) {
        guard let entries = try? Files.entries(of: path) else { return }
        for entry in entries {
            let child = path + "/" + entry.name
            switch entry.kind {
            case .directory: release(child)
            case .regular: _ = truncate(child, 0)
            case .other: continue
            }
        }
    }

    /// Deletes the tree at `path` (the end of a run).
    static func removeAll(_ path: String) throws {
        try Files.removeTree(path)
    }
}
