import BlobStore
import Foundation
import Synchronization
import Testing

@Suite("Concurrency", .backends, .timeLimit(.minutes(5)))
struct ConcurrencyBehaviourTests {
    static let identifiers = ["shared/0", "shared/1", "shared/2", "shared/3"]

    /// A self-verifying blob: XXH64 of the rest, writer, sequence, identifier index, then padding derived from them.
    static func content(writer: UInt32, sequence: UInt32, slot: UInt32) -> Data {
        let seed = UInt64(writer) << 32 | UInt64(sequence)
        let paddingLength = Int((writer &* 7919 &+ sequence &* 104_729) % 20_000) + 1
        var body = Data()
        for value in [writer, sequence, slot] { withUnsafeBytes(of: value.littleEndian) { body.append(contentsOf: $0) } }
        body.append(pseudoRandomBytes(paddingLength, seed: seed))
        var blob = Data()
        withUnsafeBytes(of: XXH64.hash(body).littleEndian) { blob.append(contentsOf: $0) }
        blob.append(body)
        return blob
    }

    /// The (writer, sequence) a blob read from `slot` claims, if it is exactly what that writer wrote there.
    static func verify(_ blob: Data, slot: UInt32) -> (writer: UInt32, sequence: UInt32)? {
        let bytes = [UInt8](blob)
        guard bytes.count > 20 else { return nil }
        func word(_ offset: Int) -> UInt32 {
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        }
        let checksum = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[$1]) << (8 * UInt64($1)) }
        guard bytes[8...].withUnsafeBytes({ XXH64.hash($0) }) == checksum else { return nil }
        let writer = word(8), sequence = word(12)
        guard word(16) == slot, blob == content(writer: writer, sequence: sequence, slot: slot) else { return nil }
        return (writer, sequence)
    }

    final class Progress: Sendable {
        let writersDone = Atomic<Int>(0)
        let putsStarted = Atomic<Int>(0)
        let putsDone = Atomic<Int>(0)
        let torn = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
        let wentBack = Atomic<Int>(0)
    }

    @Test("8 writers and 8 readers on 4 identifiers: no torn or stale reads", arguments: StoreKind.allCases)
    func writersAndReaders(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let writers = 8, rounds = 40, readers = 8
            for (slot, id) in Self.identifiers.enumerated() {
                _ = try await store.put(Self.content(writer: 999, sequence: 0, slot: UInt32(slot)), identifier: id, options: PutOptions())
            }
            // The check itself must catch a torn blob: another writer's tail, a flipped byte, a short read.
            let a = Self.content(writer: 1, sequence: 2, slot: 0), b = Self.content(writer: 3, sequence: 4, slot: 0)
            #expect(Self.verify(a, slot: 0)! == (1, 2))
            #expect(Self.verify(a.prefix(100) + b.dropFirst(100), slot: 0) == nil)
            var flipped = a
            flipped[flipped.count - 1] ^= 0x40
            #expect(Self.verify(flipped, slot: 0) == nil)
            #expect(Self.verify(a.dropLast(), slot: 0) == nil)
            #expect(Self.verify(a, slot: 1) == nil)
            let progress = Progress()
            // Readers stop reading at this deadline at the latest, and the test then says how far the
            // writers got: puts started but not done are puts that hang, none in flight is writers
            // that never got a thread.
            let deadline = ContinuousClock.now + .seconds(90)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for sequence in 1...rounds {
                            let slot = (writer + sequence) % Self.identifiers.count
                            let blob = Self.content(writer: UInt32(writer), sequence: UInt32(sequence), slot: UInt32(slot))
                            let metadata: BlobMetadata
                            progress.putsStarted.add(1, ordering: .relaxed)
                            defer { progress.putsDone.add(1, ordering: .relaxed) }
                            if writer.isMultiple(of: 2) {
                                metadata = try await store.put(blob, identifier: Self.identifiers[slot], options: PutOptions())
                            } else {
                                let chunks = stride(from: 0, to: blob.count, by: 4096).map { blob.subdata(in: $0..<min($0 + 4096, blob.count)) }
                                metadata = try await store.put(chunks: chunkStream(chunks), identifier: Self.identifiers[slot], options: PutOptions())
                            }
                            #expect(metadata.etag == expectedETag(blob))
                            await Task.yield()
                        }
                        progress.writersDone.add(1, ordering: .sequentiallyConsistent)
                    }
                }
                for reader in 0..<readers {
                    group.addTask {
                        // Per identifier and writer, the newest sequence this reader has seen: reads never go back.
                        var newest: [Int: [UInt32: UInt32]] = [:]
                        func record(_ blob: Data, slot: Int) {
                            progress.reads.add(1, ordering: .relaxed)
                            guard let (writer, sequence) = Self.verify(blob, slot: UInt32(slot)) else {
                                progress.torn.add(1, ordering: .relaxed)
                                return
                            }
                            if let seen = newest[slot]?[writer], seen > sequence { progress.wentBack.add(1, ordering: .relaxed) }
                            newest[slot, default: [:]][writer] = max(sequence, newest[slot]?[writer] ?? 0)
                        }
                        var round = 0
                        // Until every writer is done; a writer that threw cancels the group, and then
                        // the readers stop too, so its error ends the test instead of a wait for ever.
                        repeat {
                            let slot = (reader + round) % Self.identifiers.count
                            let id = Self.identifiers[slot]
                            if round.isMultiple(of: 2) {
                                record(try await store.get(id), slot: slot)
                            } else {
                                let stream = try await store.stream(id, range: nil, chunkSize: 1000)
                                let blob = try await collect(stream).data
                                #expect(stream.metadata.etag == expectedETag(blob))
                                #expect(stream.metadata.size == Int64(blob.count))
                                record(blob, slot: slot)
                            }
                            round += 1
                            await Task.yield()
                        } while !Task.isCancelled && ContinuousClock.now < deadline
                            && (progress.writersDone.load(ordering: .sequentiallyConsistent) < writers || round < 8)
                    }
                }
                while let _ = try await group.next() {
                    guard ContinuousClock.now >= deadline, progress.writersDone.load(ordering: .sequentiallyConsistent) < writers else { continue }
                    let started = progress.putsStarted.load(ordering: .relaxed), done = progress.putsDone.load(ordering: .relaxed)
                    Issue.record("after 90 s the writers had made \(done) of \(writers * rounds) puts, \(started - done) in flight; the readers \(progress.reads.load(ordering: .relaxed)) reads")
                    group.cancelAll()
                    return
                }
            }
            #expect(progress.torn.load(ordering: .sequentiallyConsistent) == 0, "reads that were not one writer's whole blob")
            #expect(progress.wentBack.load(ordering: .sequentiallyConsistent) == 0, "reads older than an earlier read")
            #expect(progress.reads.load(ordering: .sequentiallyConsistent) >= readers * 8)
            for (slot, id) in Self.identifiers.enumerated() {
                let blob = try await store.get(id)
                #expect(Self.verify(blob, slot: UInt32(slot)) != nil)
                #expect(try await store.head(id).etag == expectedETag(blob))
            }
            let statistics = try await store.statistics()
            #expect(statistics.count == 4)
        }
    }
}
