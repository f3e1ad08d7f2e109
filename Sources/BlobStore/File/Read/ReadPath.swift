internal import BlobSystem
import Dispatch
import Foundation

/// The read path: reads on the store queue, concurrent with each other and never during a commit's
/// barrier, that open a blob's current file (the descriptor then pins that version) and check its
/// content as they hand it out. A read-only engine also follows the writing process's splits here
/// (``ManifestFollower``). Reads the kernel's caches can serve without waiting skip all this
/// (``CachedReads``).
///
/// Owned by the store's engine; immutable, every collaborator guards its own state.
final class ReadPath: Sendable {
    private let queue: DispatchQueue
    private let index: BucketIndex
    let reader: BlobReader
    /// Set for a read-only engine only.
    let follower: ManifestFollower?
    private let hooks: StoreTestHooks
    /// Cache mode: expired versions are not found; reads mark recency.
    let marks: ReadMarks

    init(queue: DispatchQueue, index: BucketIndex, reader: BlobReader, follower: ManifestFollower?, hooks: StoreTestHooks, marks: ReadMarks) {
        self.marks = marks
        self.queue = queue
        self.index = index
        self.reader = reader
        self.follower = follower
        self.hooks = hooks
    }

    /// Runs `body` as a read on the queue (concurrently with other reads, never during a commit).
    func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        hooks.queuedReads.wrappingAdd(1, ordering: .relaxed)
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs `body` as a read on the queue and waits for it on this thread: for callers on threads
    /// that may block (the blocking API), never the Swift concurrency pool.
    func readNow<T>(_ body: () throws -> T) rethrows -> T {
        dispatchPrecondition(condition: .notOnQueue(queue))  // a sync onto its own queue would deadlock inside a barrier
        hooks.queuedReads.wrappingAdd(1, ordering: .relaxed)
        return try queue.sync(execute: body)
    }

    /// Opens the current version of `identifier`, or throws `notFound`. On the queue.
    func openCurrent(_ identifier: String, readLength: Int = BlobReader.initialReadLength) throws -> OpenedBlob {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let opened = try reader.open(at: index.path(of: identifier), identifier: identifier, readLength: readLength),
            let blob = marks.served(opened)
        else {
            throw BlobStoreError.notFound(store: reader.store, identifier: identifier)
        }
        return blob
    }

    /// ``openCurrent(_:readLength:)``, except that a read-only engine that misses follows a split the
    /// writing process made meanwhile (``ManifestFollower/lookAgain(for:readLength:)``). On the queue.
    func openLatest(_ identifier: String, readLength: Int = BlobReader.initialReadLength) throws -> OpenedBlob {
        do {
            return try openCurrent(identifier, readLength: readLength)
        } catch BlobStoreError.notFound where follower != nil {}
        if let opened = try follower?.lookAgain(for: identifier, readLength: readLength), let blob = marks.served(opened) { return blob }
        throw BlobStoreError.notFound(store: reader.store, identifier: identifier)
    }

    /// Checked content of an opened blob (``BlobReader/content(of:range:)``).
    func content(of blob: OpenedBlob, range: Range<Int64>) throws -> Data {
        try reader.content(of: blob, range: range)
    }

    /// ``read(_:)`` for one step of a scan (a bucket of a listing, of the totals): a read-only engine
    /// brings its map up to date first, reads the manifest again after `body`, and runs the step again
    /// when a split overlapped it (the manifest changed), up to ``ManifestFollower/scanRetries`` times.
    func step<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard let follower else { return try await read(body) }
        var attempt = 1
        while true {
            let before = try await follower.refresh()
            let (result, after) = try await read { (try body(), try follower.manifestText()) }
            // Under a split mark the same text before and after proves nothing: the writer moves
            // files between the two folders the whole time the mark stands.
            if (after == before.text && !before.splitting) || attempt == ManifestFollower.scanRetries { return result }
            attempt += 1
        }
    }

    /// A whole scan (verify) by a read-only engine: run again while a split overlapped it, like ``step(_:)``.
    func scanned<T: Sendable>(_ scan: () async throws -> T) async throws -> T {
        guard let follower else { return try await scan() }
        var attempt = 1
        while true {
            let before = try await follower.refresh()
            let result = try await scan()
            let after = try await read { try follower.manifestText() }
            if (after == before.text && !before.splitting) || attempt == ManifestFollower.scanRetries { return result }
            attempt += 1
        }
    }
}
