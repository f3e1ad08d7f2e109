internal import BlobSystem
import Foundation

/// The read paths through the memory tier (``MemoryTier``): every whole-blob read of a small blob
/// looks there first and, on a miss, fills it from the file it reads anyway.
extension PersistentDataStore {
    /// What the memory tier holds and how it has served reads, for this store's engine (shared by
    /// every instance on the same folder in this process). `budgetBytes` is 0 when the tier is off.
    public var memoryTierStatistics: MemoryTierStatistics { core.memoryTier.statistics }

    /// The tier's answer for `identifier`; a miss without a ticket when this instance does not use it.
    /// Cache mode sees a hit as the file paths' reads: an expired version is not served, and a served
    /// one is marked as recently used for eviction (``ReadMarks``).
    func memoryTierLookup(_ identifier: String) -> MemoryTier.Lookup {
        guard configuration.memoryTierBytes > 0 else { return .miss(nil) }
        let marks = core.cache.marks
        let lookup = core.memoryTier.lookup(identifier, now: { marks.clock.nowNanoseconds() })
        if case .hit = lookup { marks.read(identifier) }
        return lookup
    }

    /// What a whole-content read finds without waiting.
    enum ContentAtOnce {
        /// The content, from the memory tier or from the kernel's caches (then kept in the tier).
        case content(Data)
        /// Nothing answers at once; the read must go through the store's queue, and fill the tier
        /// with the ticket of its miss.
        case wait(MemoryTier.Ticket?)
    }

    /// The memory tier, else the kernel's caches when they can answer at once (``get(_:)`` and
    /// ``content(of:)`` both start here).
    func contentAtOnce(_ identifier: String) -> ContentAtOnce {
        let ticket: MemoryTier.Ticket?
        switch memoryTierLookup(identifier) {
        case .hit(_, let content): return .content(content)
        case .miss(let missed): ticket = missed
        }
        if configuration.inlineCachedReads, let read = core.cachedReads.content(of: identifier) {
            core.memoryTier.fill(read.header, content: read.content, ticket: ticket)
            return .content(read.content)
        }
        return .wait(ticket)
    }

    /// The whole content of a blob, read on the calling thread (blocking): from the memory tier when
    /// it holds the blob (no file system call, no hand-off to the store's queue), else from the kernel's
    /// caches when they can answer at once, else through the store's queue. Checked like ``get(_:)``.
    /// For threads that may block, never the Swift concurrency pool.
    public func content(of identifier: String) throws -> Data {
        try BlobIdentifier.validate(identifier)
        let ticket: MemoryTier.Ticket?
        switch contentAtOnce(identifier) {
        case .content(let content): return content
        case .wait(let missed): ticket = missed
        }
        let blob = try core.reads.readNow { try core.reads.openCurrent(identifier) }
        defer { try? blob.descriptor.close() }
        let content = try core.reads.content(of: blob, range: 0..<blob.header.size)
        core.memoryTier.fill(blob.header, content: content, ticket: ticket)
        return content
    }

    /// For a server's loop: the version from the memory tier; else, when the kernel's caches hold it,
    /// the opened file — except that a blob small enough for the tier is read whole (without waiting),
    /// checked, kept in the tier and served from memory. `nil` when nothing can answer at once.
    func servedIfReady(_ identifier: String) -> (any ServedBlob)? {
        let ticket: MemoryTier.Ticket?
        switch memoryTierLookup(identifier) {
        case .hit(let metadata, let content): return InMemoryServedBlob(metadata: metadata, content: content)
        case .miss(let missed): ticket = missed
        }
        guard configuration.inlineCachedReads,
            let blob = core.cachedReads.open(identifier, readLength: PersistentDataStore.blockingReadLength)
        else { return nil }
        if ticket != nil, blob.header.size <= MemoryTier.largestBlob, let content = core.cachedReads.wholeContent(of: blob) {
            try? blob.descriptor.close()
            core.memoryTier.fill(blob.header, content: content, ticket: ticket)
            return InMemoryServedBlob(metadata: blob.header.metadata, content: content)
        }
        return BlobReadHandle(blob)
    }

    /// For a server's blocking-work threads: as ``servedIfReady(_:)``, but reading the file when it
    /// must (through the store's queue when the kernel's caches cannot answer at once).
    func served(_ identifier: String) throws -> any ServedBlob {
        try BlobIdentifier.validate(identifier)
        let ticket: MemoryTier.Ticket?
        switch memoryTierLookup(identifier) {
        case .hit(let metadata, let content): return InMemoryServedBlob(metadata: metadata, content: content)
        case .miss(let missed): ticket = missed
        }
        var opened: OpenedBlob?
        if configuration.inlineCachedReads {
            opened = core.cachedReads.open(identifier, readLength: PersistentDataStore.blockingReadLength)
        }
        let blob = try opened ?? core.reads.readNow { try core.reads.openCurrent(identifier, readLength: PersistentDataStore.blockingReadLength) }
        guard ticket != nil, blob.header.size <= MemoryTier.largestBlob else { return BlobReadHandle(blob) }
        let content: Data
        do {
            content = try core.reads.content(of: blob, range: 0..<blob.header.size)
        } catch {
            try? blob.descriptor.close()
            throw error
        }
        try? blob.descriptor.close()
        core.memoryTier.fill(blob.header, content: content, ticket: ticket)
        return InMemoryServedBlob(metadata: blob.header.metadata, content: content)
    }
}
