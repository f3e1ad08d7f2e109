import Foundation

/// How a daemon's read cache in front of S3 is set up (docs/SCALE-OUT.md, "Read cache").
package struct S3ReadCacheConfiguration: Sendable {
    /// The folder the cache owns: its lock file and its `entries` folder, which is emptied at start.
    package var folder: String
    /// The most bytes (entry files: header and content) the cache keeps on disk.
    package var capacityBytes: Int64
    /// Blobs larger than this are never cached (they are read from the object store each time).
    package var maximumEntryBytes: Int64
    /// Blobs up to this size are kept in memory rather than in a file each.
    package var memoryEntryLimit: Int64
    /// The most bytes the entries held in memory take (part of ``capacityBytes``).
    package var memoryCapacityBytes: Int64
    /// How long after the object store last said an entry is current it is served without asking
    /// again. 0 (the default) asks on every read, so every read is current.
    package var stalenessSeconds: Double
    /// Where the cache says what went wrong with its own files (it then reads from the object store).
    package var log: @Sendable (String) -> Void
    /// A monotonic clock in nanoseconds, for the staleness bound (tests pass their own).
    package var now: @Sendable () -> UInt64
    /// The wall clock blobs' expiry times are compared with (tests pass their own).
    package var date: @Sendable () -> Date

    /// The default capacity: 1 GiB.
    package static let defaultCapacityBytes: Int64 = 1 << 30
    /// The default largest cached blob: 64 MiB (or the capacity, if smaller).
    package static let defaultMaximumEntryBytes: Int64 = 64 << 20
    /// The default largest blob held in memory: 64 KiB. A file per blob this small costs more (a
    /// create, writes, an open and a read per fill) than the memory it saves.
    package static let defaultMemoryEntryLimit: Int64 = 64 << 10
    /// The default bound of the entries held in memory: 64 MiB (or the capacity, if smaller).
    package static let defaultMemoryCapacityBytes: Int64 = 64 << 20

    /// A configuration; the largest cached blob and the memory bound are clamped to the capacity.
    package init(
        folder: String, capacityBytes: Int64 = S3ReadCacheConfiguration.defaultCapacityBytes,
        maximumEntryBytes: Int64 = S3ReadCacheConfiguration.defaultMaximumEntryBytes,
        memoryEntryLimit: Int64 = S3ReadCacheConfiguration.defaultMemoryEntryLimit,
        memoryCapacityBytes: Int64 = S3ReadCacheConfiguration.defaultMemoryCapacityBytes, stalenessSeconds: Double = 0,
        log: @escaping @Sendable (String) -> Void = { _ in },
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
        date: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.folder = folder
        self.capacityBytes = capacityBytes
        self.maximumEntryBytes = min(maximumEntryBytes, capacityBytes)
        self.memoryEntryLimit = memoryEntryLimit
        self.memoryCapacityBytes = min(memoryCapacityBytes, capacityBytes)
        self.stalenessSeconds = stalenessSeconds
        self.log = log
        self.now = now
        self.date = date
    }
}

/// What a read cache has done since it started: the object store's answers to its reads, and how
/// reads were served. Read with ``S3ReadCache/counters``.
package struct S3ReadCacheCounters: Sendable, Hashable {
    /// Reads served from an entry (validated with a `304`, or within the staleness bound).
    package var hits = 0
    /// Conditional or plain GETs the object store answered `304 Not Modified` (the entry was current).
    package var notModified = 0
    /// GETs the object store answered with content (a miss, or an entry that had changed).
    package var fetched = 0
    /// Reads served from an entry without asking the object store (within the staleness bound).
    package var servedWithoutValidation = 0
    /// Entries written.
    package var fills = 0
    /// Entries evicted to stay within the capacity.
    package var evictions = 0
    /// Reads that fell back to the object store because of a problem with the cache's own files
    /// (a damaged entry, a failed write, content that did not match its ETag).
    package var fallbacks = 0

    /// No counts.
    package init() {}
}
