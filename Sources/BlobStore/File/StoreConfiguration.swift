import Foundation

/// How a ``PersistentDataStore`` stores blobs.
public struct StoreConfiguration: Hashable, Sendable {
    /// Whether an acknowledged change is already on stable storage (default ``Durability/durable``).
    public var durability: Durability
    /// The largest blob a put accepts, in bytes (default 1 TiB).
    public var maximumBlobSize: Int64
    /// A bucket folder holding more blobs than this is split in two (default 8,192; small values are for tests).
    public var bucketCapacity: Int
    /// Whether a get, head or `openForReading` whose blob file and content are all in the kernel's
    /// caches is served on the calling thread, skipping the hand-off to the store's queue (default
    /// `true`). Such a read never waits: it uses only calls that fail instead of waiting for the disk
    /// (`openat2` with `RESOLVE_CACHED`, `preadv2` with `RWF_NOWAIT`), and anything else goes to the
    /// queue as before. A get served this way does not suspend the calling task, so a task that loops
    /// over many cached gets runs like any synchronous loop (yield if others must run meanwhile).
    /// `false` sends every read through the queue.
    public var inlineCachedReads: Bool
    /// How long opening a store waits while another process holds its lock (`.lock`), before
    /// throwing ``BlobStoreError/storeLocked(path:holder:)`` (default zero: throw at once). Opening
    /// does not wait for a holder that is `blobd` serving the root: it would not let go. The wait
    /// blocks the opening thread (and other opens of stores in this process).
    public var lockWait: Duration
    /// The cache policy to store with the store and apply when it is opened (also to a store this
    /// process has open already); `nil` (the default) keeps what the store has, ``StorePolicy/unlimited``
    /// for a new one. Ignored by a read-only open, which reads the stored one. See "Cache mode" in STORAGE.md.
    public var policy: StorePolicy?
    /// The clock expiry is judged by and `modified` dates are taken from (default ``StoreClock/system``);
    /// tests pass one they advance. It counts for the open that starts the store's engine in this
    /// process (later opens share that engine and its clock).
    public var clock: StoreClock
    /// The memory tier's budget in bytes (default ``defaultMemoryTierBytes``; 0 turns it off for this
    /// instance): blobs of at most 64 KiB that reads fetched are kept in memory, charged their content
    /// plus a per-entry overhead, so that reading them again costs no file system call (STORAGE.md,
    /// "Memory tier"). Instances on the same folder share one tier, whose budget is the largest any
    /// of them asked for. A store opened read-only has no tier.
    public var memoryTierBytes: Int
    /// A budget the memory tier draws on together with other stores' tiers given the same one, in
    /// place of a budget of its own (default `nil`: its own, of ``memoryTierBytes``). A process with
    /// many stores open bounds all their tiers at once this way. It counts for the open that starts
    /// the store's engine in this process (later opens share that engine and its tier);
    /// ``memoryTierBytes`` of 0 still turns the tier off for an instance.
    public var sharedMemoryTier: MemoryTierBudget?

    /// The embedded default of ``memoryTierBytes``, 8 MiB: room for the hot set of an app's screens
    /// (some 1,800 blobs of 4 KiB) at a small fraction of an app's memory; the kernel's page cache
    /// keeps serving the rest, at the cost of three file system calls per read.
    public static let defaultMemoryTierBytes = 8 << 20

    /// Creates a configuration.
    public init(
        durability: Durability = .durable, maximumBlobSize: Int64 = 1 << 40, bucketCapacity: Int = 8192,
        inlineCachedReads: Bool = true, lockWait: Duration = .zero, policy: StorePolicy? = nil, clock: StoreClock = .system,
        memoryTierBytes: Int = StoreConfiguration.defaultMemoryTierBytes, sharedMemoryTier: MemoryTierBudget? = nil
    ) {
        self.policy = policy
        self.clock = clock
        self.durability = durability
        self.maximumBlobSize = maximumBlobSize
        self.bucketCapacity = max(2, bucketCapacity)
        self.inlineCachedReads = inlineCachedReads
        self.lockWait = lockWait
        self.memoryTierBytes = max(0, memoryTierBytes)
        self.sharedMemoryTier = sharedMemoryTier
    }
}

/// The folder that holds named stores, and the conventions for finding it.
public enum StoreRoot {
    /// The format-version marker file in a root; its first line is `blobstore <version>`.
    static let formatFileName = ".blobstore-format"
    /// The layout version this build writes and reads.
    static let formatVersion = 1

    /// `$XDG_DATA_HOME/blobstore`, else `~/.local/share/blobstore`.
    public static var defaultURL: URL { defaultURL(environment: ProcessInfo.processInfo.environment) }

    /// The default root for the given environment variables (`XDG_DATA_HOME` must be absolute to count, as the XDG spec says).
    public static func defaultURL(environment: [String: String]) -> URL {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data).appendingPathComponent("blobstore", isDirectory: true)
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/blobstore", isDirectory: true)
    }
}
