import BlobSystem
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import BlobStore

@Suite struct FileStoreLayoutTests {
    let root = TemporaryRoot()

    func store(_ name: String = "main", durability: Durability = .relaxed, capacity: Int = 8192) throws -> PersistentDataStore {
        try PersistentDataStore(name: name, root: root.url, configuration: StoreConfiguration(durability: durability, bucketCapacity: capacity))
    }

    @Test func escapingIdentifiersStayInsideTheStoreFolder() async throws {
        let store = try store()
        let hostile = [
            "../x", "../../outside", "/etc/passwd", "%2e%2e", "%2e%2e/%2e%2e/x", "a/../../b", "..", ".", "./.", "~/x",
            String(repeating: "../", count: 300), String(repeating: "é", count: 512), "x/" + String(repeating: "a", count: 1020),
        ]
        for id in hostile {
            let data = Data(id.utf8)
            try await store.put(data, identifier: id)
            #expect(try await store.get(id) == data, "\(id)")
        }
        for file in root.allFiles() {
            #expect(file.hasPrefix("main/") || file == ".blobstore-format", "\(file) is outside the store folder")
        }
        let listed = try await store.listAll().map(\.identifier)
        #expect(Set(listed) == Set(hostile))
        #expect(listed == listed.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        for id in hostile { #expect(try await store.remove(id)) }
        #expect(try await store.statistics() == StoreStatistics(count: 0, bytes: 0))
    }

    /// Reads open blobs with O_NOATIME, so reading never writes the inode back.
    @Test func readingDoesNotUpdateAccessTimes() async throws {
        let store = try store()
        try await store.put(Data("content".utf8), identifier: "read-me")
        let file = try #require(root.allFiles().first { $0.hasPrefix("main/b/") && $0.hasSuffix("read-me") })
        let path = root.url.path + "/" + file
        // An access time older than the modification time: relatime would update it on the next read.
        var times = [timespec(tv_sec: 946_684_800, tv_nsec: 0), timespec(tv_sec: 1_262_304_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(try await store.get("read-me") == Data("content".utf8))
        let handle = try store.openForReading("read-me")
        handle.close()
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_atim.tv_sec == 946_684_800, "reading updated the access time")
    }

    @Test func invalidStoreNamesAreRefused() {
        for name in ["", "UPPER", ".hidden", "-dash", "a/b", "..", String(repeating: "a", count: 64), "spa ce"] {
            #expect(throws: BlobStoreError.self) { try PersistentDataStore(name: name, root: root.url) }
        }
        #expect(throws: Never.self) { try PersistentDataStore(name: String(repeating: "a", count: 63), root: root.url) }
    }

    @Test func rootCarriesAFormatMarkerAndRefusesUnknownVersions() throws {
        _ = try store()
        let marker = root.url.appendingPathComponent(".blobstore-format")
        #expect(try String(contentsOf: marker, encoding: .utf8) == "blobstore 1\n")
        try "blobstore 99\n".write(to: marker, atomically: true, encoding: .utf8)
        #expect(throws: BlobStoreError.unsupportedFormat(path: marker.path, found: "blobstore 99")) { try store("other") }
    }

    @Test func bucketsSplitKeepingEveryBlobFindableAndOrdered() async throws {
        let store = try store(capacity: 8)
        var ids: [String] = []
        for i in 0..<200 {
            let id = "k\((i * 7919) % 1000)/\(i)"
            ids.append(id)
            try await store.put(Data(id.utf8), identifier: id)
        }
        let bucketCount = store.core.queue.sync { store.core.confined.map.buckets.count }
        #expect(bucketCount > 200 / 8)
        for folder in try DirectoryStream.entries(of: store.folderURL.path + "/b") {
            let count = try DirectoryStream.entries(of: store.folderURL.path + "/b/" + folder.name).count
            #expect(count <= 8 + 1, "bucket \(folder.name) holds \(count)")
        }
        for id in ids { #expect(try await store.get(id) == Data(id.utf8)) }
        let listed = try await store.listAll(ListQuery(limit: 7)).map(\.identifier)
        #expect(listed == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        let prefixed = try await store.listAll(ListQuery(prefix: "k1", limit: 3)).map(\.identifier)
        #expect(prefixed == listed.filter { $0.hasPrefix("k1") })
        #expect(try await store.verify().isClean)
    }

    @Test func cutsFallInTheMiddleHalfSpreadOverItAndRepeatable() {
        for count in [2, 3, 5, 9, 17, 8193] {
            var seen = Set<Int>()
            for _ in 0..<400 {
                let median = (0..<16).map { _ in UInt8.random(in: 0...255) }
                let cut = BucketMap.cutIndex(count: count, median: median)
                #expect(cut >= 1 && cut < count, "count \(count): cut \(cut) would leave a half empty")
                #expect(cut >= count / 4 && cut < max(count / 4 + count / 2, 1) || count < 4, "count \(count): cut \(cut) outside the middle half")
                #expect(BucketMap.cutIndex(count: count, median: median) == cut)
                seen.insert(cut)
            }
            if count == 8193 {
                // Spread over the middle half, not bunched at the median: every eighth of the range is hit.
                let eighths = Set(seen.map { ($0 - count / 4) * 8 / (count / 2) })
                #expect(eighths == Set(0..<8), "cuts of 400 splits fell in eighths \(eighths.sorted())")
            }
        }
    }

    @Test func fullBucketsAreNotAllCutAtTheirMedian() async throws {
        // Buckets cut in equal halves by evenly spread identifiers refill in step and split in waves
        // (BucketMap.cutIndex); 17 blobs in a bucket of capacity 16 would always split 8 + 9.
        var lowerSizes: [Int] = []
        for run in 0..<12 {
            let store = try store("cut\(run)", capacity: 16)
            // The largest identifier goes first: a bucket overfilled by its largest is cut just below it
            // instead (the ascending case, tested below).
            var ids = (0..<17).map { _ in UUID().uuidString }
            let largest = ids.indices.max { Array(ids[$0].utf8).lexicographicallyPrecedes(Array(ids[$1].utf8)) }!
            ids.swapAt(0, largest)
            for id in ids { try await store.put(Data([1]), identifier: id) }
            let buckets = store.core.queue.sync { store.core.confined.map.buckets }
            #expect(buckets.count == 2)
            let sizes = try buckets.map { try DirectoryStream.entries(of: store.folderURL.path + "/b/\($0.number)").count }
            #expect(sizes.reduce(0, +) == 17)
            #expect(sizes[0] >= 4 && sizes[0] < 13, "lower half of \(sizes[0]) outside the middle half")
            lowerSizes.append(sizes[0])
        }
        #expect(Set(lowerSizes).count > 1, "every split cut at the same place: \(lowerSizes)")
    }

    @Test func ascendingIdentifiersFillBucketsToCapacityAndNeverMoveThem() async throws {
        // Each split cuts just below the new (largest) identifier: the lower bucket stays full and untouched.
        let store = try store("ascending", capacity: 16)
        let ids = (0..<200).map { String(format: "photo-%05d", $0) }
        var folderOfFirst: [String: String] = [:]
        for (index, id) in ids.enumerated() {
            try await store.put(Data(id.utf8), identifier: id)
            if index == 40 {
                // Where the first blobs live now; they must never move again.
                for folder in try DirectoryStream.entries(of: store.folderURL.path + "/b") {
                    for entry in try DirectoryStream.entries(of: store.folderURL.path + "/b/" + folder.name) { folderOfFirst[entry.name] = folder.name }
                }
            }
        }
        let buckets = store.core.queue.sync { store.core.confined.map.buckets }
        let sizes = try buckets.map { try DirectoryStream.entries(of: store.folderURL.path + "/b/\($0.number)").count }
        #expect(sizes.dropLast().allSatisfy { $0 == 16 }, "bucket sizes \(sizes)")
        #expect(sizes.count == (200 + 15) / 16)
        #expect(folderOfFirst.count == 41)
        for (file, folder) in folderOfFirst {
            #expect(FileManager.default.fileExists(atPath: store.folderURL.path + "/b/\(folder)/\(file)"), "\(file) moved out of bucket \(folder)")
        }
        #expect(try await store.listAll(ListQuery(limit: 50)).map(\.identifier) == ids)
        for id in ids.shuffled().prefix(20) { #expect(try await store.get(id) == Data(id.utf8)) }
        #expect(try await store.verify().isClean)
    }

    @Test func descendingAndRandomIdentifiersStillSplitInTheMiddleHalf() async throws {
        for (name, ids) in [("descending", (0..<17).reversed().map { String(format: "d-%03d", $0) }), ("random", (0..<17).map { _ in UUID().uuidString })] {
            let store = try store(name, capacity: 16)
            for id in ids { try await store.put(Data([1]), identifier: id) }
            let buckets = store.core.queue.sync { store.core.confined.map.buckets }
            let sizes = try buckets.map { try DirectoryStream.entries(of: store.folderURL.path + "/b/\($0.number)").count }
            let largestLast = ids.last == ids.max { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            // A random set whose last id happens to be its largest is cut like ascending ids (16 + 1).
            #expect(sizes.count == 2 && (largestLast ? sizes == [16, 1] : (4..<13).contains(sizes[0])), "\(name): \(sizes)")
        }
    }

    @Test func reopeningFindsEverythingWithoutScanning() async throws {
        let root = self.root
        do {
            let store = try PersistentDataStore(name: "s", root: root.url, configuration: StoreConfiguration(durability: .durable, bucketCapacity: 4))
            for i in 0..<50 { try await store.put(Data("v\(i)".utf8), identifier: "id-\(i)") }
        }
        // The first instance is gone, so its engine and lock are released.
        let reopened = try PersistentDataStore(name: "s", root: root.url, configuration: StoreConfiguration(bucketCapacity: 4))
        for i in 0..<50 { #expect(try await reopened.get("id-\(i)") == Data("v\(i)".utf8)) }
        #expect(try await reopened.statistics() == StoreStatistics(count: 50, bytes: Int64((0..<50).map { "v\($0)".utf8.count }.reduce(0, +))))
    }

    @Test func crashLeftoversAreClearedAndPendingSplitsFinishedOnOpen() async throws {
        let folder: String
        do {
            let store = try store("crash", capacity: 1000)
            for i in 0..<20 { try await store.put(Data([UInt8(i)]), identifier: String(format: "b%02d", i)) }
            folder = store.folderURL.path
        }
        // Simulate a crash: a temp file, an unreclaimed old version, and a split recorded in the
        // manifest whose files never moved.
        try Data("partial".utf8).write(to: URL(fileURLWithPath: folder + "/tmp/put-leftover"))
        try Data("old".utf8).write(to: URL(fileURLWithPath: folder + "/trash/old-leftover"))
        try FileSystem.makeDirectory(folder + "/b/2")
        let manifest = "blobstore-manifest 1\nnext 3\nbucket 1 -\nbucket 2 \(Hex.encode(Array("b10".utf8)))\nsplitting 2 1\n"
        try manifest.write(toFile: folder + "/manifest", atomically: true, encoding: .utf8)

        let store = try store("crash", capacity: 1000)
        #expect(try DirectoryStream.entries(of: folder + "/tmp").isEmpty)
        #expect(try DirectoryStream.entries(of: folder + "/trash").isEmpty)
        #expect(try DirectoryStream.entries(of: folder + "/b/2").count == 10)
        #expect(!(try String(contentsOfFile: folder + "/manifest", encoding: .utf8)).contains("splitting"))
        for i in 0..<20 { #expect(try await store.get(String(format: "b%02d", i)) == Data([UInt8(i)])) }
        #expect(try await store.verify().isClean)
    }

    @Test func aSecondEngineOnTheSameFolderIsRefusedWhileTheFirstLives() throws {
        let first = try store("locked")
        #expect(throws: BlobStoreError.self) {
            _ = try StoreCore(root: root.path, name: "locked", bucketCapacity: 8)
        }
        do {
            _ = try StoreCore(root: root.path, name: "locked", bucketCapacity: 8)
        } catch let error as BlobStoreError {
            #expect(error.description.contains("pid \(getpid())"))
        } catch {}
        // Instances in one process share the engine instead.
        let second = try store("locked")
        #expect(first.core === second.core)
    }

    @Test func verifyReportsDamagedAndForeignFiles() async throws {
        let store = try store("v")
        try await store.put(Data(repeating: 1, count: 5000), identifier: "good")
        try await store.put(Data(repeating: 2, count: 5000), identifier: "bad")
        let bad = store.core.queue.sync { store.core.locate("bad").path }
        let fd = try FileDescriptor.open(bad, [.writeOnly])
        try [UInt8(9)].withUnsafeBytes { try fd.writeAll(toAbsoluteOffset: 3000, $0) }
        try fd.close()
        try Data("x".utf8).write(to: URL(fileURLWithPath: store.folderURL.path + "/b/1/%zz"))
        let report = try await store.verify()
        #expect(report.healthy == 1)
        #expect(report.corrupt.map(\.identifier) == ["bad"])
        #expect(report.corrupt.first?.reason.contains("checksum") == true)
        #expect(report.orphaned.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["%zz"])
    }

    @Test func hashedNameHoldingAnotherIdentifierIsAMisplacedFile() async throws {
        let store = try store("h")
        let long = String(repeating: "a", count: 300)
        try await store.put(Data("A".utf8), identifier: long)
        // Plant that file under the hashed name of a different long identifier: its header names an
        // identifier whose file name is another one, so it is a misplaced file, not a hash collision
        // (which would leave `other` absent): reads refuse it, a put replaces it.
        let other = String(repeating: "a", count: 299) + "b"
        let (from, to) = store.core.queue.sync { (store.core.locate(long).path, store.core.locate(other).path) }
        #expect(link(from, to) == 0, "link(2): errno \(errno)")
        await #expect(throws: BlobStoreError.self) { _ = try await store.exists(other) }
        try await store.put(Data("B".utf8), identifier: other)
        #expect(try await store.get(other) == Data("B".utf8))
        #expect(try await store.get(long) == Data("A".utf8))
    }

    @Test func largeStreamedPutIsWrittenInChunksAndReadBackExactly() async throws {
        let store = try store("big")
        let chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) })
        let chunks = AsyncStream<Data> { continuation in
            for _ in 0..<8 { continuation.yield(chunk) }
            continuation.finish()
        }
        let metadata = try await store.put(chunks: chunks, identifier: "big", options: PutOptions())
        #expect(metadata.size == 8 << 20)
        var hasher = XXH64()
        for _ in 0..<8 { hasher.update(chunk) }
        #expect(metadata.etag == ETag(checksum: hasher.finalize()))
        var total = 0
        var reread = XXH64()
        for try await part in try await store.stream("big", range: nil, chunkSize: 300_000) {
            total += part.count
            reread.update(part)
        }
        #expect(total == 8 << 20)
        #expect(reread.finalize() == metadata.etag.checksum)
        let middle = try await store.get("big", range: (3 << 20)..<((3 << 20) + 10))
        #expect(middle == chunk.subdata(in: 0..<10))
    }

    @Test func tooLargeBlobsAreRefusedAndNothingIsLeftBehind() async throws {
        let store = try PersistentDataStore(name: "limit", root: root.url, configuration: StoreConfiguration(maximumBlobSize: 1000))
        await #expect(throws: BlobStoreError.tooLarge(what: "blob 'x'", limit: 1000, actual: 1001)) {
            try await store.put(Data(count: 1001), identifier: "x")
        }
        #expect(try await store.exists("x") == false)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try DirectoryStream.entries(of: store.folderURL.path + "/tmp").isEmpty)
    }

    @Test func concurrentDurablePutsShareCommits() async throws {
        let store = try store("group", durability: .durable)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<64 {
                group.addTask { try await store.put(Data("payload \(i)".utf8), identifier: "g\(i)") }
            }
            try await group.waitForAll()
        }
        #expect(try await store.statistics().count == 64)
        let batches = store.core.commitBatches.withLock { $0 }
        #expect(batches < 64, "64 concurrent puts took \(batches) commits")
    }

    /// The committer looks up what a batch's puts replace before the barrier; puts whose blob an
    /// earlier mutation of the same batch touched must still see that mutation.
    @Test func createdIsRightForEveryPutOfOneBatch() async throws {
        let store = try store("batch", durability: .durable)
        let a0 = try await store.put(Data("a0".utf8), identifier: "a")
        let b0 = try await store.put(Data("b0".utf8), identifier: "b")
        let c0 = try await store.put(Data("c0".utf8), identifier: "c")
        try await Task.sleep(for: .milliseconds(5))

        let first = try await oneBatch(store) { batch in
            try batch.put("a", "a1")  // replaces a0: looked up before the barrier
            try batch.put("a", "a2")  // replaces a1 of this batch: looked up in the barrier
            batch.remove("b")
            try batch.put("b", "b1")  // b was removed earlier in the batch: a new blob
            try batch.put("d", "d1")  // new
        }
        #expect(first["a1"]?.created == a0.created)
        #expect(first["a2"]?.created == a0.created)
        #expect(first["b1"].map { $0.created == $0.modified && $0.created > b0.created } == true)
        #expect(first["d1"].map { $0.created == $0.modified } == true)
        // What is on disk agrees with what the commits reported.
        for (identifier, key) in [("a", "a2"), ("b", "b1"), ("d", "d1")] {
            #expect(try await store.head(identifier) == first[key])
        }

        let second = try await oneBatch(store) { batch in
            batch.removeAll()
            try batch.put("c", "c1")  // after a remove-all: a new blob
        }
        #expect(second["c1"].map { $0.created == $0.modified && $0.created > c0.created } == true)
        #expect(try await store.head("c") == second["c1"])
        #expect(try await store.exists("a") == false)
    }

    /// A lone durable put syncs its content, then its folder. Under load one sync serves two batches:
    /// the content of the new one (before its renames) and the folders of the one before (after its).
    @Test func durableBatchesShareEachSyncWithTheNext() async throws {
        let store = try store("pipeline", durability: .durable)
        let core = store.core
        let syncsBefore = core.commitSyncs.withLock { $0 }
        try await store.put(Data("alone".utf8), identifier: "alone")
        #expect(core.commitSyncs.withLock { $0 } == syncsBefore + 2)

        // Batch A is held until the committer has applied it; batch B arrives in that moment.
        let (batchesBefore, syncsAtStart) = (core.commitBatches.withLock { $0 }, core.commitSyncs.withLock { $0 })
        let second = OneBatch(store: store)
        let arrived = DispatchSemaphore(value: 0)
        core.afterDurableBarrier.withLock { hook in
            hook = { [core] in
                core.afterDurableBarrier.withLock { $0 = nil }
                try? second.put("b", "b1")
                try? second.put("c", "c1")
                arrived.signal()
            }
        }
        // A is acknowledged by the sync it shares with B, so B has been taken by then.
        let first = try await oneBatch(store, batchesByTheEnd: 2) { batch in
            try batch.put("a", "a1")
            try batch.put("d", "d1")
        }
        #expect(first.count == 2)
        arrived.wait()
        await withCheckedContinuation { continuation in second.done.notify(queue: .global()) { continuation.resume() } }
        #expect(second.results.withLock { $0.count } == 2)
        #expect(core.commitBatches.withLock { $0 } == batchesBefore + 2)
        // A's content; A's folders with B's content; B's folders. Two batches one after the other took four.
        #expect(core.commitSyncs.withLock { $0 } == syncsAtStart + 3)
        for identifier in ["a", "b", "c", "d"] { #expect(try await store.exists(identifier)) }
    }

    /// Pages of one listing reuse the bucket's sorted entries while the bucket is unchanged, and read
    /// it again after a put, a remove or a remove-all changes it.
    @Test func listingPagesReuseTheBucketUntilItChanges() async throws {
        let store = try store("paging")
        let core = store.core
        for index in 0..<40 { try await store.put(Data([UInt8(index)]), identifier: String(format: "id%03d", index * 2)) }
        func page(after cursor: String?) async throws -> ListPage {
            try await store.list(ListQuery(limit: 5, cursor: cursor))
        }
        let readsBefore = core.bucketListings.withLock { $0 }
        var identifiers: [String] = []
        var cursor: String?
        repeat {
            let next = try await page(after: cursor)
            identifiers += next.items.map(\.identifier)
            cursor = next.nextCursor
        } while cursor != nil
        #expect(identifiers == (0..<40).map { String(format: "id%03d", $0 * 2) })
        #expect(core.bucketListings.withLock { $0 } == readsBefore + 1, "eight pages of one unchanged bucket read it once")

        // A new blob after the cursor, a removed one, and an overwrite between pages.
        let first = try await page(after: nil)
        try await store.put(Data("new".utf8), identifier: "id011")
        #expect(try await store.remove("id014"))
        try await store.put(Data("changed".utf8), identifier: "id016")
        let second = try await page(after: first.nextCursor)
        #expect(second.items.map(\.identifier) == ["id010", "id011", "id012", "id016", "id018"])
        #expect(second.items.first { $0.identifier == "id016" }?.size == 7)

        try await store.removeAll()
        try await store.put(Data("after".utf8), identifier: "id001")
        #expect(try await store.listAll().map(\.identifier) == ["id001"])
    }

    /// A header longer than the 4 KiB read first (8 KiB of user metadata) is read whole when a
    /// listing or an overwrite looks at it.
    @Test func headersLongerThanTheFirstReadAreReadWhole() async throws {
        let store = try store("long-header")
        let metadata = Dictionary(uniqueKeysWithValues: (0..<8).map { ("k\($0)", String(repeating: "v", count: 1000)) })
        let first = try await store.put(Data("content".utf8), identifier: "long", options: PutOptions(userMetadata: metadata))
        #expect(try await store.listAll() == [first])
        try await Task.sleep(for: .milliseconds(2))
        let second = try await store.put(Data("content 2".utf8), identifier: "long", options: PutOptions(userMetadata: metadata))
        #expect(second.created == first.created, "the overwrite found the old version's long header")
        #expect(try await store.listAll() == [second])
        #expect(try await store.verify().isClean)
    }

    /// The durability promise, checked on the commit log: every acknowledged durable put had its
    /// content synced before the barrier that renamed it, and that barrier's folders synced after it
    /// and before the acknowledgement — for a lone put, for overlapping batches, and under load.
    @Test func everyAcknowledgedDurablePutWasSyncedInOrder() async throws {
        let store = try store("protocol", durability: .durable)
        let core = store.core
        core.commitLog.withLock { $0 = [] }
        try await store.put(Data("alone".utf8), identifier: "alone")
        let second = OneBatch(store: store)
        core.afterDurableBarrier.withLock { hook in
            hook = { [core] in
                core.afterDurableBarrier.withLock { $0 = nil }
                for index in 0..<3 { try? second.put("second/\(index)", "s\(index)") }
            }
        }
        _ = try await oneBatch(store, batchesByTheEnd: 2) { batch in
            for index in 0..<4 { try batch.put("first/\(index)", "f\(index)") }
        }
        await withCheckedContinuation { continuation in second.done.notify(queue: .global()) { continuation.resume() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<48 { group.addTask { try await store.put(Data("load \(index)".utf8), identifier: "load/\(index)") } }
            try await group.waitForAll()
        }
        let log = core.commitLog.withLock { log in
            defer { log = nil }
            return log ?? []
        }

        var acknowledged = 0
        for (ackIndex, event) in log.enumerated() {
            guard case .acknowledged(let temps) = event else { continue }
            for temp in temps {
                acknowledged += 1
                guard let renameIndex = log.firstIndex(where: { if case .renamed(let renamed, _) = $0 { renamed.contains(temp) } else { false } }),
                    case .renamed(_, let folders) = log[renameIndex]
                else {
                    Issue.record("\(temp) was acknowledged but never renamed")
                    continue
                }
                #expect(renameIndex < ackIndex, "\(temp) acknowledged before its rename")
                let contentSynced = log[..<renameIndex].contains { event in
                    if case .synced(let synced, _) = event { synced.contains(temp) } else { false }
                }
                #expect(contentSynced, "\(temp) renamed before its content was synced")
                let foldersSynced = renameIndex < ackIndex && log[(renameIndex + 1)..<ackIndex].contains { event in
                    if case .synced(_, let synced) = event { Set(synced).isSuperset(of: folders) } else { false }
                }
                #expect(foldersSynced, "\(temp) acknowledged before its folder was synced")
            }
        }
        #expect(acknowledged == 1 + 4 + 3 + 48)
    }

    /// Mutations submitted by `body` while the committer is held, so that they commit as one batch;
    /// returns the metadata of each put, by the text it stored.
    private func oneBatch(
        _ store: PersistentDataStore, batchesByTheEnd: Int = 1, _ body: (OneBatch) throws -> Void
    ) async throws -> [String: BlobMetadata] {
        let gate = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        let counted = Locked(0)
        // Counted on the commit queue once the turns queued before (a pipelined acknowledgement of
        // the previous puts) have run, so that only this batch's turn counts.
        store.core.commitQueue.async { [core = store.core] in
            counted.withLock { $0 = core.commitBatches.withLock { $0 } }
            holding.signal()
            gate.wait()
        }
        holding.wait()
        let batchesBefore = counted.withLock { $0 }
        let batch = OneBatch(store: store)
        try body(batch)
        gate.signal()
        await withCheckedContinuation { continuation in batch.done.notify(queue: .global()) { continuation.resume() } }
        #expect(store.core.commitBatches.withLock { $0 } == batchesBefore + batchesByTheEnd, "the mutations were meant to commit as one batch")
        return batch.results.withLock { $0 }
    }

    private final class OneBatch: Sendable {
        let store: PersistentDataStore
        let done = DispatchGroup()
        let results = Locked<[String: BlobMetadata]>([:])

        init(store: PersistentDataStore) { self.store = store }

        func put(_ identifier: String, _ text: String) throws {
            let upload = try store.beginUpload(identifier: identifier, options: PutOptions())
            try Data(text.utf8).withUnsafeBytes { try upload.append($0) }
            done.enter()
            upload.commit { [self] result in
                if case .success(let metadata) = result { results.withLock { $0[text] = metadata } }
                done.leave()
            }
        }

        func remove(_ identifier: String) {
            done.enter()
            store.remove(identifier, condition: .none) { [self] _ in done.leave() }
        }

        func removeAll() {
            done.enter()
            store.removeAllBlobs { [self] _ in done.leave() }
        }
    }
}

@Suite struct ArticleAPITests {
    let root = TemporaryRoot()
    static let key = DispatchSpecificKey<String>()

    func queue(_ label: String) -> DispatchQueue {
        let queue = DispatchQueue(label: label)
        queue.setSpecific(key: ArticleAPITests.key, value: label)
        return queue
    }

    @Test func storeLoadRemoveWithCompletionsOnTheChosenQueue() async throws {
        let store = try PersistentDataStore(name: "article", root: root.url)
        let queue = queue("completions")
        let identifier: String = try await withCheckedThrowingContinuation { continuation in
            store.storeData({ Data("hello".utf8) }, completionQueue: queue) { result in
                #expect(DispatchQueue.getSpecific(key: ArticleAPITests.key) == "completions")
                switch result {
                case .success(let id): continuation.resume(returning: id)
                case .noData: continuation.resume(throwing: BlobStoreError.notFound(store: "", identifier: "noData"))
                case .failed(let error): continuation.resume(throwing: error)
                }
            }
        }
        #expect(UUID(uuidString: identifier) != nil)
        let text: String? = await withCheckedContinuation { continuation in
            store.loadData(forIdentifier: identifier, dataTransformer: { String(decoding: $0, as: UTF8.self) }, completionQueue: queue) {
                #expect(DispatchQueue.getSpecific(key: ArticleAPITests.key) == "completions")
                continuation.resume(returning: $0)
            }
        }
        #expect(text == "hello")
        let existed: Bool = try await withCheckedThrowingContinuation { continuation in
            store.removeData(forIdentifier: identifier, completionQueue: queue) { continuation.resume(with: $0) }
        }
        #expect(existed)
        let missing: String? = await withCheckedContinuation { continuation in
            store.loadData(forIdentifier: identifier, dataTransformer: { String(decoding: $0, as: UTF8.self) }, completionQueue: queue) {
                continuation.resume(returning: $0)
            }
        }
        #expect(missing == nil)
    }

    @Test func emptyProviderReportsNoDataAndStoresNothing() async throws {
        let store = try PersistentDataStore(name: "article", root: root.url)
        let noData: Bool = await withCheckedContinuation { continuation in
            store.storeData({ nil }, identifier: "x", completionQueue: queue("q")) {
                if case .noData = $0 { continuation.resume(returning: true) } else { continuation.resume(returning: false) }
            }
        }
        #expect(noData)
        #expect(try await store.exists("x") == false)
    }

    @Test func providerRunsOutsideTheBarrier() async throws {
        let store = try PersistentDataStore(name: "article", root: root.url)
        try await store.put(Data("r".utf8), identifier: "r")
        // The provider reads from the same store synchronously; inside a barrier this would deadlock.
        let done: Bool = await withCheckedContinuation { continuation in
            store.storeData({
                let reader = DispatchSemaphore(value: 0)
                let box = UncheckedSendable<Data?>(nil)
                let result = Mutexed(box)
                store.loadData(forIdentifier: "r", dataTransformer: { $0 }, completionQueue: DispatchQueue(label: "inner")) {
                    result.set($0)
                    reader.signal()
                }
                return reader.wait(timeout: .now() + 30) == .success ? result.get() : nil
            }, identifier: "w", completionQueue: queue("q")) {
                if case .success = $0 { continuation.resume(returning: true) } else { continuation.resume(returning: false) }
            }
        }
        #expect(done)
        #expect(try await store.get("w") == Data("r".utf8))
    }

    @Test func removeAllEmptiesTheStore() async throws {
        let store = try PersistentDataStore(name: "article", root: root.url)
        for i in 0..<10 { try await store.put(Data([UInt8(i)]), identifier: "\(i)") }
        let error: (any Error)? = await withCheckedContinuation { continuation in
            store.removeAll(completionQueue: queue("q")) { continuation.resume(returning: $0) }
        }
        #expect(error == nil)
        #expect(try await store.statistics().count == 0)
        #expect(try await store.list(ListQuery()).items.isEmpty)
    }
}

/// A lock-protected box for handing a value between queues in tests.
final class Mutexed<Value>: @unchecked Sendable {
    private var value: UncheckedSendable<Value>
    private let lock = NSLock()
    init(_ value: UncheckedSendable<Value>) { self.value = value }
    func set(_ newValue: Value) { lock.withLock { value = UncheckedSendable(newValue) } }
    func get() -> Value { lock.withLock { value.value } }
}

@Suite struct FileStoreImageTests {
    let root = TemporaryRoot()

    static let fixtures: [(String, ImageFormat, Int, Int)] = [
        ("png-317x211.png", .png, 317, 211), ("jpeg-exif-317x211.jpg", .jpeg, 317, 211), ("gif-3x500.gif", .gif, 3, 500),
        ("webp-lossless-317x211.webp", .webp, 317, 211), ("bmp-topdown-317x211.bmp", .bmp, 317, 211),
        ("tiff-be-3x500.tif", .tiff, 3, 500), ("heic-317x211.heic", .heic, 317, 211), ("avif-1x1.avif", .avif, 1, 1),
    ]

    @Test func imageMetadataSurvivesReopening() async throws {
        var stored: [String: ImageInfo] = [:]
        do {
            let store = try PersistentDataStore(name: "img", root: root.url)
            for (file, format, width, height) in Self.fixtures {
                let url = try #require(Bundle.module.url(forResource: file, withExtension: nil, subdirectory: "Fixtures/images"))
                let metadata = try await store.putImage(try Data(contentsOf: url), identifier: file)
                #expect(metadata.image == ImageInfo(format: format, width: width, height: height))
                #expect(metadata.contentType == format.mimeType)
                stored[file] = metadata.image
            }
        }
        let reopened = try PersistentDataStore(name: "img", root: root.url)
        for (file, _, _, _) in Self.fixtures {
            #expect(try await reopened.head(file).image == stored[file])
        }
        let images = try await reopened.list(ListQuery(contentTypePrefix: "image/", limit: 100)).items
        #expect(images.count == Self.fixtures.count)
    }
}

@Suite struct StoreRootTests {
    @Test func defaultRootFollowsXDGDataHomeElseHome() {
        #expect(StoreRoot.defaultURL(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]).path == "/data/blobstore")
        #expect(StoreRoot.defaultURL(environment: ["HOME": "/home/u"]).path == "/home/u/.local/share/blobstore")
        // A relative XDG_DATA_HOME is invalid per the spec and ignored.
        #expect(StoreRoot.defaultURL(environment: ["XDG_DATA_HOME": "rel", "HOME": "/home/u"]).path == "/home/u/.local/share/blobstore")
    }
}
