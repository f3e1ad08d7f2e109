internal import BlobSystem

extension BucketIndex {
    /// Splits the bucket at `index`, over capacity since `added` was put into it, in two. In a barrier.
    ///
    /// Where it is cut is ``BucketCut``'s choice. Crash-safe: the manifest records the split as pending
    /// before any file moves, so an interrupted split is finished when the store next opens.
    func split(bucketAt index: Int, after added: String, touched: inout Set<String>) throws {
        let old = map.buckets[index]
        let entries = try BucketFolder.entries(of: paths.bucket(old.number))
        guard entries.count >= 2 else { return }
        let bound = entries[BucketCut.index(in: entries, added: added)].identifier
        var split = map
        let new = split.split(bucketAt: index, at: bound)
        _ = try io("create folder", paths.bucket(new.number)) { try FileSystem.makeDirectory(paths.bucket(new.number)) }
        // The new folder's entry is durable before any blob moves into it (a folder's `fsync` does
        // not make its own name durable).
        try io("sync folder", paths.buckets) { try FileSystem.syncDirectory(paths.buckets) }
        try Manifest.write(split, paths: paths)
        replaceMap(split)
        try finishSplit()
        touched.insert(paths.bucket(old.number))
        touched.insert(paths.bucket(new.number))
    }

    /// Moves every blob that belongs to the pending split's new bucket there, then clears the pending
    /// mark. In a barrier (or while opening, before anything else uses the store).
    func finishSplit() throws {
        var current = map
        guard let split = current.pendingSplit,
            let newIndex = current.buckets.firstIndex(where: { $0.number == split.newBucket })
        else {
            current.pendingSplit = nil
            replaceMap(current)
            return
        }
        let bound = current.buckets[newIndex].lowerBound
        let from = paths.bucket(split.fromBucket), to = paths.bucket(split.newBucket)
        bucketChanged(split.fromBucket)
        bucketChanged(split.newBucket)
        let entries = try BucketFolder.entries(of: from)
        var moved = 0
        for entry in entries where !entry.identifier.lexicographicallyPrecedes(bound) {
            try io("move", from + "/" + entry.fileName) {
                try FileSystem.rename(from + "/" + entry.fileName, to: to + "/" + entry.fileName)
            }
            moved += 1
        }
        // The new names first: a crash between the two syncs leaves a moved blob in both folders (the
        // next open finishes the split), never in neither.
        try io("sync folder", to) { try FileSystem.syncDirectory(to) }
        try io("sync folder", from) { try FileSystem.syncDirectory(from) }
        current.pendingSplit = nil
        replaceMap(current)
        try writeManifest()
        if let count = count(ofBucket: split.fromBucket) {
            setCount(count - moved, ofBucket: split.fromBucket)
        }
        setCount((try? DirectoryStream.entries(of: to).count) ?? moved, ofBucket: split.newBucket)
    }
}
