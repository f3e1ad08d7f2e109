@testable import BlobServer
import BlobStore
import Dispatch
import Testing

/// The daemon's table of open stores: first puts claim a store, refused ones discard it, and the
/// per-name locks live only while a call uses them.
struct StoreDirectoryTests {
    private func directory() -> StoreDirectory {
        StoreDirectory(catalog: MemoryStoreCatalog(), maximumBlobSize: 1 << 20, log: Log(level: .error))
    }

    @Test func refusedFirstPutsToManyNamesLeaveNoStoreAndNoLock() throws {
        let directory = directory()
        for index in 0..<500 {
            let name = "tried-\(index)"
            let (_, claim) = try directory.storeForPut(name)
            let claimed = try #require(claim, "a first put to '\(name)' holds a claim")
            #expect(try directory.existing(name) == nil, "a store whose first put is in progress is not visible to reads")
            claimed.end(committed: false)
            #expect(try directory.existing(name) == nil, "a refused first put left the store '\(name)'")
        }
        #expect(try directory.storeNames().isEmpty)
        #expect(directory.nameLockCount == 0)
    }

    @Test func concurrentPutsAndReadsOfFewNamesKeepCommittedStoresAndFreeEveryLock() async throws {
        let directory = directory()
        let names = (0..<4).map { "shared-\($0)" }
        // Eight threads at once on four names: puts that commit on even names only, reads of every name.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 8) { worker in
                    for round in 0..<200 {
                        let name = names[(worker + round) % names.count]
                        if let (_, claim) = try? directory.storeForPut(name) {
                            claim?.end(committed: name.hasSuffix("0") || name.hasSuffix("2"))
                        }
                        _ = try? directory.existing(name)
                    }
                }
                done.resume()
            }
        }
        #expect(try directory.storeNames() == ["shared-0", "shared-2"])
        #expect(directory.openStores().keys.sorted() == ["shared-0", "shared-2"])
        #expect(directory.nameLockCount == 0)
    }
}
