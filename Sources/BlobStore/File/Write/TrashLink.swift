internal import BlobSystem

/// Fast path: before a put replaces a blob, the old version is hard-linked into `trash/`, so the
/// rename over it does not free its blocks inside the commit's barrier (on a disk whose filesystem
/// discards freed blocks, a synchronous TRIM); the trash is unlinked later on the reclaim queue.
///
/// Removable on its own: without this file and its one call in ``ChangeApplier``'s `applyPut`, the
/// rename frees the old version's blocks itself.
enum TrashLink {
    /// Links the file at `path` into `trash`; returns the link's path for the reclaim queue to
    /// unlink, or `nil` if linking failed (the replacement goes on without it).
    static func keep(_ path: String, in trash: String) -> String? {
        let link = trash + "/" + StorePaths.uniqueName("old-")
        return (try? FileSystem.link(path, as: link)) != nil ? link : nil
    }
}
