/// When a put's content is made durable on its own (`fdatasync`), by mode (STORAGE.md, "Durability
/// modes"). Folders are synced after every durable batch (``GroupCommit``); this decides the files.
enum SyncPolicy {
    /// Whether the committer syncs `put`'s content before the batch's barrier, in the round of syncs
    /// it shares with the previous batch's folders: every durable put, so no name ever points at
    /// content that is not on the disk; and a relaxed put known to replace a blob (a filesystem may
    /// persist the rename before the data, trading a version that was on the disk for an empty
    /// file).
    static func syncsBeforeBarrier(_ put: PreparedPut, replacing replaced: ExistingBlob?) -> Bool {
        if put.durable { return true }
        if case .present? = replaced { return true }
        return false
    }

    /// Whether a relaxed put syncs its content inside the barrier, just before its rename: it found
    /// the blob it replaces only there (an earlier mutation of its batch touched the same blob), so it
    /// was not synced before.
    static func syncsInBarrier(_ put: PreparedPut, found: ExistingBlob) -> Bool {
        if case .absent = found { return false }
        return !put.durable && !put.contentSynced
    }
}
