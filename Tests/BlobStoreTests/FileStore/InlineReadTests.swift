import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

#if canImport(Glibc)
import Glibc
#endif

/// Reads served from the kernel's caches on the caller's thread (`StoreConfiguration.inlineCachedReads`):
/// they must not wait for the store's queue, must fall back to it for anything not cached, and
/// must give the same answers a read on the queue would, even with a stale bucket map.
@Suite struct InlineReadTests {
    let root = TemporaryRoot()

    func store(_ name: String = "inline", durability: Durability = .relaxed, bucketCapacity: Int = 8192, inline: Bool = true) throws
        -> PersistentDataStore
    {
        try PersistentDataStore(
            name: name, root: root.url,
            // With inline reads off the memory tier is off too: such a store reads through the queue, always.
            configuration: StoreConfiguration(
                durability: durability, bucketCapacity: bucketCapacity, inlineCachedReads: inline, memoryTierBytes: inline ? 8 << 20 : 0))
    }

    /// Whether this kernel serves cache-only reads at all (openat2 with RESOLVE_CACHED, Linux 5.12+).
    func kernelServesCachedReads(_ store: PersistentDataStore) async throws -> Bool {
        try await store.put(Data("probe".utf8), identifier: "probe")
        _ = try await store.get("probe")
        if store.core.cachedReadsWork.load(ordering: .relaxed) { return true }
        print("skipped: cache-only reads are refused here (kernel before 5.12, or no RWF_NOWAIT on this filesystem)")
        return false
    }

    @Test func cachedReadsDoNotWaitForACommitInProgress() async throws {
        let inline = try store()
        guard try await kernelServesCachedReads(inline) else { return }
        let content = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })
        let metadata = try await inline.put(content, identifier: "photo")
        let queuedBefore = inline.core.queuedReads.load(ordering: .relaxed)

        let release = hold(inline.core.queue)  // as a long commit would
        // Run the reads aside and give them a deadline, so a regression fails the test instead of hanging it.
        let reads = Task.detached {
            #expect(try await inline.get("photo") == content)
            #expect(try await inline.head("photo") == metadata)
            #expect(try await inline.exists("photo"))
            let handle = try inline.openForReading("photo")
            #expect(try handle.read(0..<Int64(content.count)) == content)
            handle.close()
        }
        let readsFinished = Locked(false)
        Task.detached {
            _ = await reads.result
            readsFinished.withLock { $0 = true }
        }
        for _ in 0..<500 where !readsFinished.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(readsFinished.withLock { $0 }, "cached reads waited for the held queue")
        #expect(inline.core.queuedReads.load(ordering: .relaxed) == queuedBefore)
        if !readsFinished.withLock({ $0 }) {
            release()
            try await reads.value
            return
        }
        try await reads.value

        // The same engine with inline reads off waits for the queue, as every read did before.
        let queued = try store(inline: false)
        let finished = Locked(false)
        let waiting = Task {
            let data = try await queued.get("photo")
            finished.withLock { $0 = true }
            return data
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!finished.withLock { $0 })
        release()
        #expect(try await waiting.value == content)
        #expect(inline.core.queuedReads.load(ordering: .relaxed) == queuedBefore + 1)
    }

    @Test func contentMissingFromThePageCacheIsReadOnTheQueue() async throws {
        let store = try store(durability: .durable)
        guard try await kernelServesCachedReads(store) else { return }
        let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await store.put(content, identifier: "cold")
        // Durable: the content was synced, so its pages are clean and the kernel drops them on request.
        let path = store.core.queue.sync { store.core.path(of: "cold") }
        let fd = try FileDescriptor.open(path, [.readOnly])
        defer { try? fd.close() }
        // Checked with mincore, which never reads: a refused RWF_NOWAIT read starts readahead, which
        // on a busy machine brought the page back before the get below. Spread over a second: the kernel
        // skips a page it cannot drop at that instant, and under load back-to-back attempts all can.
        var dropped = false
        for attempt in 0..<50 where !dropped {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(20)) }
            _ = posix_fadvise(fd.rawValue, 0, 0, Int32(POSIX_FADV_DONTNEED))
            dropped = try !InlineReadTests.firstPageIsResident(fd)
        }
        try #require(dropped, "the kernel kept the file's pages through 50 POSIX_FADV_DONTNEED calls over 1 s")

        let queuedBefore = store.core.queuedReads.load(ordering: .relaxed)
        #expect(try await store.get("cold") == content)
        #expect(store.core.queuedReads.load(ordering: .relaxed) == queuedBefore + 1)
        // That read brought the pages back: the next one is served inline.
        #expect(try await store.get("cold") == content)
        #expect(store.core.queuedReads.load(ordering: .relaxed) == queuedBefore + 1)
    }

    @Test func getsOfBlobsOverTheInlineLimitGoToTheQueue() async throws {
        let store = try store()
        guard try await kernelServesCachedReads(store) else { return }
        let limit = Int(StoreCore.largestInlineRead)
        let atLimit = Data((0..<limit).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let overLimit = atLimit + Data([7])
        try await store.put(atLimit, identifier: "at-limit")
        try await store.put(overLimit, identifier: "over-limit")
        // Read in several cache-only reads. Under load the kernel may still be writing the fresh
        // file's pages back, and a cache-only read of a page under writeback is refused: then the get
        // goes to the queue. One inline read within a second proves the limit; a limit below 1 MiB
        // would send every try to the queue.
        var servedInline = false
        for _ in 0..<50 where !servedInline {
            let before = store.core.queuedReads.load(ordering: .relaxed)
            #expect(try await store.get("at-limit") == atLimit)
            servedInline = store.core.queuedReads.load(ordering: .relaxed) == before
            if !servedInline { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(servedInline, "a get of exactly 1 MiB never read inline in 50 tries over a second")
        let queuedBefore = store.core.queuedReads.load(ordering: .relaxed)
        #expect(try await store.get("over-limit") == overLimit)
        #expect(store.core.queuedReads.load(ordering: .relaxed) == queuedBefore + 1)
    }

    /// Whether the page cache holds the first page of `fd`'s file (`mincore` of a mapping never
    /// touched, so asking reads nothing).
    static func firstPageIsResident(_ fd: FileDescriptor) throws -> Bool {
        let length = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, fd.rawValue, 0), mapping != MAP_FAILED else {
            throw Errno.current
        }
        defer { munmap(mapping, length) }
        var vector: UInt8 = 0
        guard mincore(mapping, length, &vector) == 0 else { throw Errno.current }
        return vector & 1 != 0
    }

    /// Inline reads locate blobs through a copy of the bucket map that a split may have outdated.
    /// A stale map must only ever miss (and a miss goes to the queue), never give a wrong answer.
    @Test func aStaleBucketMapOnlyMissesAndMissesAreAnsweredByTheQueue() async throws {
        let store = try store(bucketCapacity: 4)
        guard try await kernelServesCachedReads(store) else { return }
        let identifiers = (0..<40).map { String(format: "id-%03d", $0) }
        for id in identifiers { try await store.put(Data("v1 \(id)".utf8), identifier: id) }
        let buckets = store.core.queue.sync { store.core.confined.map.buckets.count }
        try #require(buckets > 4, "the puts should have split the first bucket")

        // Every blob but those still in the first bucket is now missed by the inline path.
        store.core.publishedMap.withLock { $0 = .initial }
        let queuedBefore = store.core.queuedReads.load(ordering: .relaxed)
        for id in identifiers {
            #expect(try await store.get(id) == Data("v1 \(id)".utf8))
            #expect(try await store.head(id).identifier == id)
        }
        let queued = store.core.queuedReads.load(ordering: .relaxed) - queuedBefore
        #expect(queued > 0 && queued < 2 * identifiers.count, "some reads inline (first bucket), the rest on the queue: \(queued)")
        // A removed blob is not found, whichever path looks.
        try await store.remove("id-000")
        await #expect(throws: BlobStoreError.notFound(store: "inline", identifier: "id-000")) { try await store.get("id-000") }
    }

    /// Readers racing writers that replace blobs and split buckets see, for every get, one whole
    /// version of the blob they asked for — never a mix, another blob, or a false "not found".
    @Test func readersRacingOverwritesAndSplitsSeeWholeVersions() async throws {
        let store = try store(bucketCapacity: 8)
        guard try await kernelServesCachedReads(store) else { return }
        func content(_ id: String, version: Int) -> Data {
            let line = "\(id) version \(version)\n"
            return Data(String(repeating: line, count: 4096 / line.utf8.count + 1).utf8)
        }
        let seeded = (0..<64).map { "seed-\($0)" }
        for id in seeded { try await store.put(content(id, version: 0), identifier: id) }
        let done = Locked(false)
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                // Overwrites of the seeded blobs and new blobs, which keep splitting buckets.
                for round in 1...12 {
                    for (index, id) in seeded.enumerated() where index % 3 == round % 3 {
                        try await store.put(content(id, version: round), identifier: id)
                    }
                    for extra in 0..<24 { try await store.put(Data("x".utf8), identifier: "new-\(round)-\(extra)") }
                }
                done.withLock { $0 = true }
                return 0
            }
            for reader in 0..<3 {
                group.addTask {
                    var checked = 0
                    var index = reader
                    while !done.withLock({ $0 }) || checked < 200 {
                        let id = seeded[index % seeded.count]
                        index += 7
                        let data = try await store.get(id)
                        let text = String(decoding: data, as: UTF8.self)
                        let firstLine = text.prefix { $0 != "\n" }
                        #expect(firstLine.hasPrefix(id + " version "), "\(id) read as \(firstLine)")
                        let version = Int(firstLine.split(separator: " ").last ?? "") ?? -1
                        #expect(data == content(id, version: version), "\(id): not one whole version")
                        checked += 1
                        // A get served inline does not suspend: without this, readers on both of the
                        // pool's threads would never let the writer run.
                        await Task.yield()
                    }
                    return checked
                }
            }
            var reads = 0
            for try await count in group { reads += count }
            #expect(reads >= 600)
        }
        let splits = store.core.queue.sync { store.core.confined.map.buckets.count }
        #expect(splits > 8, "the writers should have split buckets while readers read")
    }
}
