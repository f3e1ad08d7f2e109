import BlobStore
import BlobSystem
import Foundation
import S3BlobStore
import Testing

/// The read cache in front of a store that reads conditionally (``ReadCacheFakeStore``): hits are
/// validated with the object store and served from the entry's file, changes made elsewhere are
/// seen at once, changes made through it drop entries, damage falls back to the object store.
@Suite struct ReadCacheTests {
    struct Setup {
        let folder = ReadCacheFolder()
        let backend: ReadCacheFakeStore
        let cache: S3ReadCache
        let store: S3CachedStore
        let clock = ReadCacheClock()
        let wallClock = ReadCacheWallClock()
        let log = ReadCacheLog()

        /// `memoryLimit` 0: every entry in a file.
        init(
            capacity: Int64 = 1 << 20, maximumEntry: Int64 = 1 << 20, memoryLimit: Int64 = S3ReadCacheConfiguration.defaultMemoryEntryLimit,
            memoryCapacity: Int64 = S3ReadCacheConfiguration.defaultMemoryCapacityBytes, staleness: Double = 0
        ) throws {
            backend = try ReadCacheFakeStore()
            cache = try S3ReadCache(S3ReadCacheConfiguration(
                folder: folder.path, capacityBytes: capacity, maximumEntryBytes: maximumEntry, memoryEntryLimit: memoryLimit,
                memoryCapacityBytes: memoryCapacity, stalenessSeconds: staleness, log: log.sink, now: clock.read, date: wallClock.read))
            store = S3CachedStore(backend, cache: cache)
        }

        /// Another writer: straight to the object store.
        @discardableResult
        func write(_ identifier: String, _ text: String) async throws -> BlobMetadata {
            try await backend.memory.put(Data(text.utf8), identifier: identifier, options: PutOptions())
        }

        func read(_ identifier: String) throws -> (text: String, fromFile: Bool) {
            let blob = try store.open(identifier)
            defer { blob.close() }
            let fromFile = blob.fileBody != nil
            return (String(decoding: try blob.read(0..<blob.metadata.size), as: UTF8.self), fromFile)
        }

        func entryFiles() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: folder.path + "/entries").sorted()
        }
    }

    @Test func aHitIsValidatedWithA304AndServedFromTheEntryFile() async throws {
        let setup = try Setup(memoryLimit: 0)
        defer { setup.folder.remove() }
        let stored = try await setup.write("a/b", "hello cache")
        let first = try setup.read("a/b")
        #expect(first.text == "hello cache" && first.fromFile)
        #expect(setup.backend.fetched == 1 && setup.backend.notModified == 0)
        for _ in 0..<3 {
            let again = try setup.store.open("a/b")
            #expect(again.metadata == stored, "the entry serves the version's own metadata")
            #expect(again.fileBody != nil)
            #expect(String(decoding: try again.read(0..<again.metadata.size), as: UTF8.self) == "hello cache")
            again.close()
        }
        #expect(setup.backend.fetched == 1, "no hit downloaded the content again")
        #expect(setup.backend.notModified == 3, "every hit asked the object store (staleness 0)")
        #expect(setup.cache.counters.hits == 3 && setup.cache.counters.fills == 1)
        #expect(try setup.entryFiles().count == 1)
    }

    /// Entries in files (`memoryLimit` 0) and in memory.
    @Test(arguments: [0, S3ReadCacheConfiguration.defaultMemoryEntryLimit])
    func aChangeByAnotherWriterIsSeenByTheNextRead(memoryLimit: Int64) async throws {
        let setup = try Setup(memoryLimit: memoryLimit)
        defer { setup.folder.remove() }
        try await setup.write("k", "version one")
        #expect(try setup.read("k").text == "version one")
        try await setup.write("k", "version two, longer")
        #expect(try setup.read("k").text == "version two, longer")
        #expect(setup.backend.fetched == 2 && setup.backend.notModified == 0)
        #expect(try setup.read("k").text == "version two, longer")
        #expect(setup.backend.notModified == 1)
        #expect(try setup.cache.occupancy.entries == 1 && setup.entryFiles().count == (memoryLimit == 0 ? 1 : 0), "the new version replaced the entry")

        _ = try await setup.backend.memory.remove("k", condition: .none)
        #expect(throws: BlobStoreError.notFound(store: "photos", identifier: "k")) { try setup.read("k") }
        #expect(try setup.cache.occupancy.entries == 0 && setup.entryFiles().isEmpty, "a blob gone from the object store drops its entry")
    }

    @Test(arguments: [0, S3ReadCacheConfiguration.defaultMemoryEntryLimit])
    func putsRemovesAndRemoveAllThroughTheCacheDropEntries(memoryLimit: Int64) async throws {
        let setup = try Setup(memoryLimit: memoryLimit)
        defer { setup.folder.remove() }
        for name in ["p", "q", "r"] {
            try await setup.write(name, "old \(name)")
            _ = try setup.read(name)
        }
        #expect(setup.cache.occupancy.entries == 3)

        let upload = try setup.store.startUpload(identifier: "p", options: PutOptions())
        try Array("new p".utf8).withUnsafeBytes { try upload.append($0) }
        // The commit completes on a transport thread of its own.
        _ = try await withCheckedThrowingContinuation { continuation in upload.commit { continuation.resume(with: $0) } }
        #expect(setup.cache.occupancy.entries == 2, "the put dropped its entry before it was acknowledged")
        #expect(try setup.read("p").text == "new p")

        #expect(try await setup.store.remove("q", condition: .none))
        #expect(setup.cache.occupancy.entries == 2)
        #expect(throws: BlobStoreError.self) { try setup.read("q") }

        try await setup.store.removeAll()
        #expect(try setup.cache.occupancy.entries == 0 && setup.entryFiles().isEmpty)
    }

    @Test(arguments: [0, S3ReadCacheConfiguration.defaultMemoryEntryLimit])
    func withinTheStalenessBoundAnEntryIsServedWithoutAsking(memoryLimit: Int64) async throws {
        let setup = try Setup(memoryLimit: memoryLimit, staleness: 10)
        defer { setup.folder.remove() }
        try await setup.write("s", "first")
        #expect(try setup.read("s").text == "first")
        // A change made elsewhere and not reported is not seen until the bound has passed: the
        // documented trade-off.
        setup.backend.setUnreported(true)
        try await setup.write("s", "second")
        setup.backend.setUnreported(false)
        setup.clock.advance(seconds: 9)
        #expect(try setup.read("s").text == "first")
        #expect(setup.backend.fetched == 1 && setup.backend.notModified == 0)
        #expect(setup.cache.counters.servedWithoutValidation == 1)
        setup.clock.advance(seconds: 2)
        #expect(try setup.read("s").text == "second")
        #expect(setup.backend.fetched == 2)
        // A change the store's observers hear of (a fleet member's, reported) is seen at once.
        try await setup.write("s", "third")
        #expect(try setup.read("s").text == "third", "the backend's change event made the entry due for validation")
    }

    /// The staleness bound runs from when S3 was asked, not from when its answer was dealt with: a
    /// transfer of 8 s, or an answer 8 s in coming, leaves an entry 2 s of a 10 s bound, however
    /// fresh the bytes look locally (docs/SCALE-OUT.md, "Read cache": at most S seconds behind).
    @Test(arguments: [0, S3ReadCacheConfiguration.defaultMemoryEntryLimit])
    func theStalenessBoundRunsFromWhenTheObjectStoreWasAsked(memoryLimit: Int64) throws {
        let setup = try Setup(memoryLimit: memoryLimit, staleness: 10)
        defer { setup.folder.remove() }
        let clock = setup.clock
        try setup.backend.writeNow("s", "first")
        // A fill whose transfer takes 8 s.
        setup.backend.setOnTransfer { clock.advance(seconds: 8) }
        #expect(try setup.read("s").text == "first")
        setup.backend.setOnTransfer(nil)
        setup.clock.advance(seconds: 3)
        setup.backend.setUnreported(true)
        try setup.backend.writeNow("s", "second")
        #expect(try setup.read("s").text == "second", "11 s after S3 was asked: validated, not served from the entry")
        #expect(setup.cache.counters.servedWithoutValidation == 0 && setup.backend.fetched == 2)

        // A validation whose 304 takes 8 s to come.
        setup.clock.advance(seconds: 11)
        setup.backend.setOnAnswer { clock.advance(seconds: 8) }
        #expect(try setup.read("s").text == "second")
        setup.backend.setOnAnswer(nil)
        #expect(setup.backend.notModified == 1)
        setup.clock.advance(seconds: 3)
        try setup.backend.writeNow("s", "third")
        #expect(try setup.read("s").text == "third", "11 s after S3 was asked: validated again")
        #expect(setup.cache.counters.servedWithoutValidation == 0 && setup.backend.fetched == 3)

        // Within the bound of the question, the entry is served without asking.
        setup.clock.advance(seconds: 9)
        try setup.backend.writeNow("s", "fourth")
        #expect(try setup.read("s").text == "third")
        #expect(setup.cache.counters.servedWithoutValidation == 1)
    }

    /// A change made elsewhere reported while a read is asking S3 (its answer may predate the
    /// change) leaves the entry that read makes due for validation: the report is not lost to the
    /// answer it raced with.
    @Test(arguments: [0, S3ReadCacheConfiguration.defaultMemoryEntryLimit])
    func aChangeReportedWhileTheObjectStoreIsAskedIsNotLostToItsAnswer(memoryLimit: Int64) throws {
        let setup = try Setup(memoryLimit: memoryLimit, staleness: 10)
        defer { setup.folder.remove() }
        let backend = setup.backend
        try backend.writeNow("r", "first")
        // The fill's answer holds "first"; "second" is written and reported before it is kept.
        backend.setOnAnswer {
            backend.setOnAnswer(nil)
            _ = try? backend.writeNow("r", "second")
        }
        #expect(try setup.read("r").text == "first")
        #expect(try setup.read("r").text == "second", "the fill's entry was due for validation")
        #expect(setup.cache.counters.servedWithoutValidation == 0)

        // The same for a validation answered 304.
        setup.clock.advance(seconds: 11)
        backend.setOnAnswer {
            backend.setOnAnswer(nil)
            _ = try? backend.writeNow("r", "third")
        }
        #expect(try setup.read("r").text == "second")
        #expect(backend.notModified == 1)
        #expect(try setup.read("r").text == "third", "the 304 did not make the entry fresh")
        #expect(setup.cache.counters.servedWithoutValidation == 0)
        #expect(try setup.read("r").text == "third")
        #expect(setup.cache.counters.servedWithoutValidation == 1, "without a report, an answer makes the entry fresh")
    }

    /// An entry whose blob has expired is validated, even within the staleness bound, and never
    /// served: the object store keeps an expired object (S3 has no sweep) and answers `304` for
    /// it, so the blob is not found; a version that replaced it is fetched and served.
    @Test(arguments: [0, S3ReadCacheConfiguration.defaultMemoryEntryLimit], [0.0, 60])
    func anEntryWhoseBlobHasExpiredIsValidatedAndNeverServed(memoryLimit: Int64, staleness: Double) throws {
        let setup = try Setup(memoryLimit: memoryLimit, staleness: staleness)
        defer { setup.folder.remove() }
        // The fake object store keeps the blob whatever its expiry, as S3 does; the cache's wall
        // clock is what passes the expiry.
        let expiring = PutOptions(expiry: .at(setup.wallClock.read().addingTimeInterval(3_600)))
        try setup.backend.writeNow("x", "expires in an hour", options: expiring)
        #expect(try setup.read("x").text == "expires in an hour")
        setup.wallClock.advance(seconds: 7_200)
        #expect(throws: BlobStoreError.notFound(store: "photos", identifier: "x")) { try setup.read("x") }
        #expect(setup.backend.notModified == 1, "asked the object store, which answered 304")
        #expect(setup.cache.counters.hits == 0 && setup.cache.counters.servedWithoutValidation == 0)
        #expect(throws: BlobStoreError.notFound(store: "photos", identifier: "x")) { try setup.read("x") }
        #expect(setup.backend.notModified == 2)

        // Replaced by a version that does not expire (a change not reported): validated, fetched, served.
        setup.backend.setUnreported(true)
        try setup.backend.writeNow("x", "lasting")
        #expect(try setup.read("x").text == "lasting")
        #expect(setup.backend.fetched == 2)
    }

    @Test func entriesBeyondTheCapacityAreEvictedLeastRecentlyUsedFirst() async throws {
        // Each entry is a header (~80 bytes) plus 1,000 content bytes: three fit in 3,500.
        let setup = try Setup(capacity: 3_500, memoryLimit: 0)
        defer { setup.folder.remove() }
        for name in ["a", "b", "c", "d"] {
            try await setup.write(name, String(repeating: name, count: 1000))
            _ = try setup.read(name)
        }
        #expect(setup.cache.occupancy.entries == 3 && setup.cache.occupancy.bytes <= 3_500)
        #expect(setup.cache.counters.evictions == 1, "the oldest, a, went")
        _ = try setup.read("b")  // used again since the clock's hand passed it
        try await setup.write("e", String(repeating: "e", count: 1000))
        _ = try setup.read("e")
        #expect(setup.cache.counters.evictions == 2)
        #expect(try setup.entryFiles().count == 3, "evicted entries' files are deleted")
        let fetchedBefore = setup.backend.fetched
        for name in ["b", "d", "e"] { _ = try setup.read(name) }
        #expect(setup.backend.fetched == fetchedBefore, "b, used again, stayed; c went instead")
        _ = try setup.read("c")
        #expect(setup.backend.fetched == fetchedBefore + 1)
    }

    @Test func aBlobLargerThanTheEntryLimitIsReadFromTheObjectStore() async throws {
        let setup = try Setup(maximumEntry: 2_000)
        defer { setup.folder.remove() }
        try await setup.write("big", String(repeating: "x", count: 5_000))
        let read = try setup.read("big")
        #expect(read.text.count == 5_000 && !read.fromFile)
        #expect(setup.cache.occupancy.entries == 0 && setup.backend.opened == 1)
    }

    @Test(arguments: [0, S3ReadCacheConfiguration.defaultMemoryEntryLimit])
    func contentThatDoesNotMatchItsETagIsNeverCachedOrServed(memoryLimit: Int64) async throws {
        let setup = try Setup(memoryLimit: memoryLimit)
        defer { setup.folder.remove() }
        try await setup.write("d", "some content to damage")
        setup.backend.damageNextFetch()
        let read = try setup.read("d")
        #expect(read.text == "some content to damage", "served from the object store's own read")
        #expect(try setup.cache.occupancy.entries == 0 && setup.entryFiles().isEmpty)
        #expect(setup.cache.counters.fallbacks == 1 && setup.backend.opened == 1)
        #expect(setup.log.all.contains { $0.contains("blob 'd' in store 'photos'") && $0.contains("not its ETag") }, "\(setup.log.all)")
    }

    @Test(arguments: [14, 200_000])
    func aDamagedEntryFileFallsBackToTheObjectStoreWithALogLine(size: Int) async throws {
        let setup = try Setup(memoryLimit: 0)
        defer { setup.folder.remove() }
        let content = String(repeating: "precious bytes ", count: size / 15 + 1).prefix(size)
        try await setup.write("e", String(content))
        _ = try setup.read("e")
        let file = setup.folder.path + "/entries/" + (try setup.entryFiles()[0])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        bytes[bytes.count - 1] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: file))

        let read = try setup.read("e")
        #expect(read.text == content)
        #expect(setup.cache.counters.fallbacks == 1)
        #expect(setup.log.all.contains { $0.contains(file) && $0.contains("unusable") }, "\(setup.log.all)")
        #expect(try setup.read("e").text == content)
        #expect(setup.cache.occupancy.entries == 1, "refilled")
    }

    @Test func anUnreachableObjectStoreIsAnErrorNeverAStaleEntry() async throws {
        let setup = try Setup()
        defer { setup.folder.remove() }
        try await setup.write("u", "cached")
        _ = try setup.read("u")
        setup.backend.setUnavailable(true)
        #expect {
            try setup.read("u")
        } throws: { error in
            guard case BlobStoreError.backendUnavailable = error else { return false }
            return true
        }
        setup.backend.setUnavailable(false)
        #expect(try setup.read("u").text == "cached")
        #expect(setup.backend.notModified == 1, "the entry survived the outage")
    }

    @Test func aCacheFolderIsEmptiedAtStartAndNotShared() async throws {
        let folder = ReadCacheFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path + "/entries", withIntermediateDirectories: true)
        try Data("left over".utf8).write(to: URL(fileURLWithPath: folder.path + "/entries/7"))
        let cache = try S3ReadCache(S3ReadCacheConfiguration(folder: folder.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/entries").isEmpty)
        #expect {
            _ = try S3ReadCache(S3ReadCacheConfiguration(folder: folder.path))
        } throws: { error in
            "\(error)".contains(folder.path) && "\(error)".contains("another process")
        }
        withExtendedLifetime(cache) {}
    }

    @Test func aSmallBlobsEntryIsHeldInMemoryAndStillValidatedOnEveryRead() async throws {
        let setup = try Setup()
        defer { setup.folder.remove() }
        let text = String(repeating: "small blob ", count: 372)  // 4,092 bytes
        let stored = try await setup.write("s/4k", text)
        let first = try setup.read("s/4k")
        #expect(first.text == text && !first.fromFile, "served from the bytes just received")
        #expect(try setup.entryFiles().isEmpty, "no file for a small blob's entry")
        #expect(setup.cache.occupancy.entries == 1 && setup.cache.counters.fills == 1)
        for _ in 0..<2 {
            let again = try setup.store.open("s/4k")
            #expect(again.metadata == stored && again.fileBody == nil && again.readsWithoutWaiting)
            #expect(String(decoding: try again.read(0..<again.metadata.size), as: UTF8.self) == text)
            #expect(String(decoding: try again.read(6..<10), as: UTF8.self) == "blob")
            again.close()
        }
        #expect(setup.backend.fetched == 1 && setup.backend.notModified == 2, "every hit asked the object store (staleness 0)")
        #expect(setup.cache.counters.hits == 2)
        try await setup.write("s/4k", "changed elsewhere")
        #expect(try setup.read("s/4k").text == "changed elsewhere")
        #expect(setup.cache.occupancy.entries == 1 && setup.backend.fetched == 2)
    }

    /// SCALE-OUT.md's defaults: blobs up to 64 KiB in memory, those entries bounded by 64 MiB or the cache size.
    @Test(arguments: [(65_536, true), (65_537, false)])
    func upTo64KiBAnEntryIsHeldInMemoryByDefault(size: Int, inMemory: Bool) async throws {
        let setup = try Setup()
        defer { setup.folder.remove() }
        try await setup.write("edge", String(repeating: "e", count: size))
        let read = try setup.read("edge")
        #expect(read.text.utf8.count == size && read.fromFile == !inMemory)
        #expect(try setup.entryFiles().count == (inMemory ? 0 : 1))
        #expect(S3ReadCacheConfiguration(folder: "/unused").memoryCapacityBytes == 64 << 20)
        #expect(S3ReadCacheConfiguration(folder: "/unused", capacityBytes: 1 << 20).memoryCapacityBytes == 1 << 20)
    }

    @Test func entriesHeldInMemoryStayWithinTheirOwnBound() async throws {
        // Four small blobs of 1,000 bytes (1,256 each in memory, three fit in 4,000) and one larger
        // blob in a file; the cache as a whole has room for all.
        let setup = try Setup(memoryLimit: 2_000, memoryCapacity: 4_000)
        defer { setup.folder.remove() }
        try await setup.write("large", String(repeating: "L", count: 3_000))
        _ = try setup.read("large")
        for name in ["a", "b", "c", "d"] {
            try await setup.write(name, String(repeating: name, count: 1_000))
            _ = try setup.read(name)
        }
        #expect(setup.cache.occupancy.entries == 4, "three small ones and the large one")
        #expect(setup.cache.counters.evictions == 1)
        #expect(try setup.entryFiles().count == 1)
        let fetched = setup.backend.fetched
        for name in ["large", "b", "c", "d"] { _ = try setup.read(name) }
        #expect(setup.backend.fetched == fetched, "the entry in a file stayed; the oldest small one, a, went")
        _ = try setup.read("a")
        #expect(setup.backend.fetched == fetched + 1)
    }

    /// A reader that checks the content itself (as ``S3BlobStore``'s does) and fails at its end: the
    /// read fails, nothing is kept, nothing partial is served.
    @Test(arguments: [4_000, 300_000])
    func aFillWhoseReaderFindsDamageFailsAndKeepsNothing(size: Int) async throws {
        let setup = try Setup()
        defer { setup.folder.remove() }
        setup.backend.setReaderChecks(true)
        let content = String(repeating: "damaged in flight ", count: size / 18 + 1).prefix(size)
        try await setup.write("x", String(content))
        setup.backend.damageNextFetch()
        #expect {
            try setup.read("x")
        } throws: { error in
            guard case BlobStoreError.corrupt = error else { return false }
            return true
        }
        #expect(try setup.cache.occupancy.entries == 0 && setup.entryFiles().isEmpty)
        #expect(setup.backend.opened == 0, "no second download: the reader's failure is the answer")
        #expect(try setup.read("x").text == content, "the next read fills")
        #expect(setup.cache.occupancy.entries == 1)
    }

    /// Cold reads of one blob at once each fill an entry; one stays, and no file is left behind.
    @Test(arguments: [4_000, 300_000])
    func concurrentColdReadsOfOneBlobLeaveOneEntry(size: Int) async throws {
        let setup = try Setup()
        defer { setup.folder.remove() }
        let content = String(repeating: "read at once ", count: size / 13 + 1).prefix(size)
        try await setup.write("c", String(content))
        let texts = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let text = (try? setup.read("c").text) ?? "failed"
            texts.withLock { $0.append(text) }
        }
        #expect(texts.withLock { $0 }.allSatisfy { $0 == content })
        #expect(setup.cache.occupancy.entries == 1)
        let files = try setup.entryFiles()
        #expect(files.count == (size > 65_536 ? 1 : 0), "\(files)")
        #expect(setup.cache.occupancy.bytes < Int64(2 * size), "one entry counted")
    }

    @Test func theClockGivesARecentlyUsedEntryASecondChance() {
        var index = S3ReadCacheIndex()
        let keys = (0..<4).map { S3CacheKey(store: "s", identifier: "\($0)") }
        for (number, key) in keys.enumerated() {
            _ = index.insert(key, S3CacheEntry(fileName: "\(number)", bytes: 10, objectETag: "e", validatedAt: 1))
        }
        #expect(index.evict(toFit: 40).isEmpty)
        // Every entry was just inserted (referenced): the hand clears them all, then takes the first.
        #expect(index.evict(toFit: 30) == ["0"])
        _ = index.use(keys[1])
        #expect(index.evict(toFit: 20) == ["2"], "1 was used again since the hand passed it")
        #expect(index.totalBytes == 20 && index.count == 2)
        #expect(index.remove(keys[3]) == "3" && index.removeAll(store: "s") == ["1"] && index.count == 0)
    }

    @Test func theClockKeepsEntriesInMemoryUnderTheirBoundAndPassesOverFiles() {
        var index = S3ReadCacheIndex()
        let held = S3HeldVersion(metadata: BlobMetadata(identifier: "m", size: 0, contentType: "x/y", etag: ETag(checksum: 0), created: Date(), modified: Date()), content: Data())
        _ = index.insert(S3CacheKey(store: "s", identifier: "f0"), S3CacheEntry(fileName: "0", bytes: 10, objectETag: "e", validatedAt: 1))
        for number in 1...3 {
            _ = index.insert(S3CacheKey(store: "s", identifier: "m\(number)"), S3CacheEntry(held: held, bytes: 10, objectETag: "e", validatedAt: 1))
        }
        #expect(index.totalBytes == 40 && index.memoryBytes == 30)
        #expect(index.evict(toFit: 100, memory: 20).isEmpty, "an entry in memory has no file to delete")
        #expect(index.count == 3 && index.memoryBytes == 20 && index.peek(S3CacheKey(store: "s", identifier: "f0")) != nil, "the file's entry was passed over")
        #expect(index.peek(S3CacheKey(store: "s", identifier: "m1")) == nil, "the first in memory went")
    }
}
