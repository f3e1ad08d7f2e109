import BlobStore
import Foundation

/// Which blob a cache entry holds: a store's name and the blob's identifier.
package struct S3CacheKey: Hashable, Sendable {
    /// The store.
    package var store: String
    /// The blob.
    package var identifier: String

    /// A key.
    package init(store: String, identifier: String) {
        self.store = store
        self.identifier = identifier
    }
}

/// One cached version: where it is (a file in the cache folder, or in memory for a small blob), what
/// it takes, the S3 ETag of the object it was filled from (what a conditional GET names), and when
/// it was last known current.
package struct S3CacheEntry: Hashable, Sendable {
    /// The entry's file name in the cache's entries folder (unique: never reused while the cache
    /// lives); `nil` for an entry held in memory.
    package var fileName: String?
    /// The checked content and metadata of an entry held in memory; `nil` for one in a file.
    package var held: S3HeldVersion?
    /// What the entry counts against the cache's size: the file's length (header and content), or
    /// the content held in memory plus ``S3ReadCache/memoryEntryOverhead``.
    package var bytes: Int64
    /// S3's ETag of the object the entry holds, unquoted.
    package var objectETag: String
    /// When the question was sent to which the object store last answered that this version is
    /// current (monotonic nanoseconds); 0 when it is due for validation.
    package var validatedAt: UInt64
    /// Where the entry sits on the clock (``S3ReadCacheIndex``).
    var slot: Int = 0

    /// An entry in a file.
    package init(fileName: String, bytes: Int64, objectETag: String, validatedAt: UInt64) {
        self.fileName = fileName
        self.bytes = bytes
        self.objectETag = objectETag
        self.validatedAt = validatedAt
    }

    /// An entry held in memory.
    package init(held: S3HeldVersion, bytes: Int64, objectETag: String, validatedAt: UInt64) {
        self.held = held
        self.bytes = bytes
        self.objectETag = objectETag
        self.validatedAt = validatedAt
    }
}

/// A small blob's version kept in memory by the read cache: its metadata and its content, checked
/// against the metadata's ETag when it arrived.
package struct S3HeldVersion: Hashable, Sendable {
    /// The version's metadata.
    package var metadata: BlobMetadata
    /// Its whole content.
    package var content: Data

    /// A version and its content.
    package init(metadata: BlobMetadata, content: Data) {
        self.metadata = metadata
        self.content = content
    }
}

/// The cache's table of entries with CLOCK eviction (a second-chance approximation of LRU): every
/// entry sits in a slot on a ring with a "referenced" bit that a hit sets; the hand clears set bits
/// as it passes and evicts the first entry whose bit is already clear. A hit costs one bit write
/// (no list to reorder under the lock), and an eviction is O(1) amortized.
///
/// Entries held in memory are also counted apart (``memoryBytes``), so that ``evict(toFit:memory:)``
/// can keep them under a bound of their own.
///
/// A value type with no locking: ``S3ReadCache`` owns it under its mutex. Removing an entry only
/// takes it out of the table; the caller deletes the returned file names (outside the lock).
package struct S3ReadCacheIndex: Sendable {
    private var entries: [S3CacheKey: S3CacheEntry] = [:]
    private var ring: [S3CacheKey?] = []
    private var referenced: [Bool] = []
    private var freeSlots: [Int] = []
    private var hand = 0
    /// What every entry takes on disk, in bytes.
    package private(set) var totalBytes: Int64 = 0
    /// What the entries held in memory take, in bytes (part of ``totalBytes``).
    package private(set) var memoryBytes: Int64 = 0

    /// An empty table.
    package init() {}

    /// How many entries.
    package var count: Int { entries.count }

    /// The entry for `key`, marked as recently used.
    package mutating func use(_ key: S3CacheKey) -> S3CacheEntry? {
        guard let entry = entries[key] else { return nil }
        referenced[entry.slot] = true
        return entry
    }

    /// The entry for `key`, without marking it used.
    package func peek(_ key: S3CacheKey) -> S3CacheEntry? { entries[key] }

    /// Records that the object store has just said `key`'s entry holding `objectETag` is current.
    package mutating func markValidated(_ key: S3CacheKey, objectETag: String, at now: UInt64) {
        guard var entry = entries[key], entry.objectETag == objectETag else { return }
        entry.validatedAt = now
        entries[key] = entry
    }

    /// Makes `key`'s entry due for validation on its next read (a change was made elsewhere).
    package mutating func markStale(_ key: S3CacheKey) {
        guard var entry = entries[key] else { return }
        entry.validatedAt = 0
        entries[key] = entry
    }

    /// Makes every entry of `store` due for validation.
    package mutating func markAllStale(store: String) {
        for key in entries.keys where key.store == store { entries[key]!.validatedAt = 0 }
    }

    /// Adds or replaces `key`'s entry; returns the replaced entry's file name, if it had one.
    package mutating func insert(_ key: S3CacheKey, _ entry: S3CacheEntry) -> String? {
        var entry = entry
        var replaced: String?
        if let old = entries[key] {
            replaced = old.fileName
            totalBytes -= old.bytes
            if old.held != nil { memoryBytes -= old.bytes }
            entry.slot = old.slot
        } else if let slot = freeSlots.popLast() {
            entry.slot = slot
            ring[slot] = key
        } else {
            entry.slot = ring.count
            ring.append(key)
            referenced.append(false)
        }
        referenced[entry.slot] = true
        entries[key] = entry
        totalBytes += entry.bytes
        if entry.held != nil { memoryBytes += entry.bytes }
        return replaced
    }

    /// Takes `key`'s entry out; returns its file name (`nil` also for an entry held in memory).
    package mutating func remove(_ key: S3CacheKey) -> String? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        ring[entry.slot] = nil
        referenced[entry.slot] = false
        freeSlots.append(entry.slot)
        totalBytes -= entry.bytes
        if entry.held != nil { memoryBytes -= entry.bytes }
        return entry.fileName
    }

    /// Takes every entry of `store` out; returns their file names.
    package mutating func removeAll(store: String) -> [String] {
        entries.keys.filter { $0.store == store }.compactMap { remove($0) }
    }

    /// Evicts entries, least recently used first (by the clock), until at most `capacity` bytes
    /// remain, of which at most `memory` in entries held in memory; returns the evicted entries' file
    /// names. While only the memory bound is exceeded, the hand passes over entries in files
    /// without touching them.
    package mutating func evict(toFit capacity: Int64, memory: Int64 = .max) -> [String] {
        var evicted: [String] = []
        while totalBytes > capacity || memoryBytes > memory, !entries.isEmpty {
            if hand >= ring.count { hand = 0 }
            defer { hand += 1 }
            guard let key = ring[hand] else { continue }
            if totalBytes <= capacity, entries[key]?.held == nil { continue }
            if referenced[hand] {
                referenced[hand] = false
                continue
            }
            if let name = remove(key) { evicted.append(name) }
        }
        return evicted
    }
}
