import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobStore

/// `BlobUpload` and `BlobReadHandle` are `Sendable`: shared between threads, they stay correct
/// (and `swift test --sanitize=thread` sees no race).
@Suite struct SharedBlockingHandleTests {
    let root = TemporaryRoot()

    /// Runs blocking `body` on a Dispatch thread: the test's threads block, the concurrency pool's must not.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test func anUploadFedFromManyThreadsKeepsEveryPieceWhole() async throws {
        let store = try PersistentDataStore(name: "shared", root: root.url, configuration: StoreConfiguration(durability: .relaxed))
        let threads = 8, piecesEach = 40, pieceSize = 4096
        let (size, counts, mixed) = try await Self.offPool { () throws -> (Int64, [Int], [Int]) in
            let upload = try store.beginUpload(identifier: "pieces", options: PutOptions())
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                let piece = [UInt8](repeating: UInt8(thread + 1), count: pieceSize)
                for _ in 0..<piecesEach {
                    piece.withUnsafeBytes { try! upload.append($0) }
                }
            }
            let done = DispatchSemaphore(value: 0)
            let outcome = Locked<Result<BlobMetadata, any Error>?>(nil)
            upload.commit { result in
                outcome.withLock { $0 = result }
                done.signal()
            }
            done.wait()
            let metadata = try outcome.withLock { $0 }!.get()
            // Finished: later calls do nothing.
            [UInt8](repeating: 0, count: 1).withUnsafeBytes { try! upload.append($0) }
            upload.cancel()

            let handle = try store.openForReading("pieces")
            defer { handle.close() }
            let content = [UInt8](try handle.read(0..<metadata.size))
            var counts = [Int](repeating: 0, count: threads + 1)
            var mixed: [Int] = []
            for start in stride(from: 0, to: content.count, by: pieceSize) {
                let piece = content[start..<min(start + pieceSize, content.count)]
                if piece.count < pieceSize || !piece.allSatisfy({ $0 == piece.first }) { mixed.append(start) }
                counts[min(Int(piece.first!), threads)] += 1
            }
            return (metadata.size, counts, mixed)
        }
        #expect(size == Int64(threads * piecesEach * pieceSize))
        #expect(mixed.isEmpty, "pieces mixing two appends at \(mixed)")
        #expect(counts.dropFirst().allSatisfy { $0 == piecesEach }, "\(counts)")
    }

    @Test func aReadHandleReadFromManyThreadsGivesEachItsRange() async throws {
        let store = try PersistentDataStore(name: "shared", root: root.url)
        let content = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await store.put(content, identifier: "big")
        let handle = try store.openForReading("big")
        defer { handle.close() }
        let mismatches = try await Self.offPool {
            let mismatches = Locked(0)
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                let range = Int64(thread * 100_000)..<Int64(thread * 100_000 + 50_000)
                let read = try? handle.read(range)
                if read != content[Int(range.lowerBound)..<Int(range.upperBound)] { mismatches.withLock { $0 += 1 } }
            }
            return mismatches.withLock { $0 }
        }
        #expect(mismatches == 0)
    }

    @Test func aReadAfterCloseThrowsRatherThanReadWhateverNowHasItsDescriptor() async throws {
        let store = try PersistentDataStore(name: "shared", root: root.url)
        try await store.put(Data("the blob".utf8), identifier: "one")
        let handle = try store.openForReading("one")
        handle.close()
        // The lowest free descriptor number is the one the handle had.
        let other = try FileDescriptor.open(store.folderURL.path + "/.lock", [.readOnly])
        defer { try? other.close() }
        do {
            let read = try handle.read(0..<8)
            Issue.record("read \(read.count) bytes after close")
        } catch BlobStoreError.io(let operation, let path, let errno) {
            #expect(operation == "read (handle closed)" && errno.rawValue == EBADF)
            #expect(path.hasPrefix(store.folderURL.path + "/"), "\(path)")
        }
        handle.close()
    }
}
