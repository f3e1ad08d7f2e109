internal import BlobSystem

/// Making new folders and small files durable: what the engine writes outside a commit (the format
/// marker, the manifest, the folders it creates).
enum DurableWrite {
    /// Writes `bytes` to `path` atomically and durably: temp file, fsync, rename, fsync of the folder.
    static func replace(_ path: String, with bytes: [UInt8], temp: String) throws {
        try io("write", temp) {
            let fd = try FileDescriptor.open(temp, [.writeOnly, .create, .truncate])
            try fd.closeAfter {
                try bytes.withUnsafeBytes { raw in try fd.writeAll(raw) }
                try fd.sync()
            }
        }
        try io("rename", path) { try FileSystem.rename(temp, to: path) }
        let folder = StorePaths.parent(of: path)
        try io("sync folder", folder) { try FileSystem.syncDirectory(folder) }
    }

    /// Syncs the parent folder of each of `folders` (each once), making their entries durable.
    static func syncParents(of folders: [String]) throws {
        var parents: [String] = []
        for folder in folders where !parents.contains(StorePaths.parent(of: folder)) { parents.append(StorePaths.parent(of: folder)) }
        for parent in parents { try io("sync folder", parent) { try FileSystem.syncDirectory(parent) } }
    }
}
