import BlobStore
import BlobSystem
import Dispatch
import Foundation
import Testing

@testable import BlobClient

/// The article's API on `RemoteBlobStore`: calls made one after another take effect in that order
/// without waiting for their handlers, as on the embedded stores (``ArticleDataStoring``).
@Suite(.serialized, .enabled(if: DaemonFixture.binary != nil)) struct RemoteArticleOrderTests {
    /// One call of a generated sequence.
    enum Step: Sendable, CustomStringConvertible {
        case store(String, String), storeNothing(String), storeImage(String, UInt32), storeNonImage(String)
        case load(String), loadImage(String), remove(String), removeAll

        var isRead: Bool {
            switch self {
            case .load, .loadImage: return true
            default: return false
            }
        }
        var description: String {
            switch self {
            case .store(let id, let value): return "store(\(id)=\(value))"
            case .storeNothing(let id): return "storeNothing(\(id))"
            case .storeImage(let id, let width): return "storeImage(\(id) w\(width))"
            case .storeNonImage(let id): return "storeNonImage(\(id))"
            case .load(let id): return "load(\(id))"
            case .loadImage(let id): return "loadImage(\(id))"
            case .remove(let id): return "remove(\(id))"
            case .removeAll: return "removeAll"
            }
        }
    }

    /// What each call's handler must report if the calls ran one at a time, in order.
    static func expectedOutcomes(_ steps: [Step], blobs: inout [String: Data]) -> [String] {
        steps.map { step in
            switch step {
            case .store(let id, let value):
                blobs[id] = Data(value.utf8)
                return "stored \(id)"
            case .storeNothing: return "noData"
            case .storeImage(let id, let width):
                blobs[id] = Self.png(width: width)
                return "stored \(id)"
            case .storeNonImage: return "failed"
            case .load(let id): return "data " + (blobs[id].map { String(decoding: $0, as: UTF8.self) } ?? "nil")
            case .loadImage(let id): return "image " + (blobs[id].flatMap(StoredImage.init(data:)).map { "w\($0.info.width)" } ?? "nil")
            case .remove(let id): return "removed \(blobs.removeValue(forKey: id) != nil)"
            case .removeAll:
                blobs.removeAll()
                return "removedAll"
            }
        }
    }

    /// Makes all calls at once, without waiting; returns each handler's report and the order the handlers ran in.
    static func run(_ steps: [Step], on store: RemoteBlobStore) async -> (outcomes: [String], order: [Int]) {
        let queue = DispatchQueue(label: "remote-article.completions")
        let recorded = Locked((outcomes: [String](repeating: "nothing", count: steps.count), order: [Int]()))
        let group = DispatchGroup()
        for (index, step) in steps.enumerated() {
            group.enter()
            let record: @Sendable (String) -> Void = { outcome in
                recorded.withLock {
                    $0.outcomes[index] = outcome
                    $0.order.append(index)
                }
                group.leave()
            }
            let stored: @Sendable (StoreDataResult) -> Void = { result in
                switch result {
                case .success(let id): record("stored \(id)")
                case .noData: record("noData")
                case .failed: record("failed")
                }
            }
            switch step {
            case .store(let id, let value):
                store.storeData({ Data(value.utf8) }, identifier: id, completionQueue: queue, completionHandler: stored)
            case .storeNothing(let id):
                store.storeData({ nil }, identifier: id, completionQueue: queue, completionHandler: stored)
            case .storeImage(let id, let width):
                store.storeImage(Self.png(width: width), identifier: id, completionQueue: queue, completionHandler: stored)
            case .storeNonImage(let id):
                store.storeImage(Data("not an image".utf8), identifier: id, completionQueue: queue, completionHandler: stored)
            case .load(let id):
                store.loadData(forIdentifier: id, dataTransformer: { String(decoding: $0, as: UTF8.self) }, completionQueue: queue) {
                    record("data " + ($0 ?? "nil"))
                }
            case .loadImage(let id):
                store.loadImage(forIdentifier: id, completionQueue: queue) { record("image " + ($0.map { "w\($0.info.width)" } ?? "nil")) }
            case .remove(let id):
                store.removeData(forIdentifier: id, completionQueue: queue) { result in
                    record((try? result.get()).map { "removed \($0)" } ?? "failed")
                }
            case .removeAll:
                store.removeAll(completionQueue: queue) { record($0 == nil ? "removedAll" : "failed") }
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: queue) { continuation.resume() } }
        return recorded.withLock { ($0.outcomes, $0.order) }
    }

    @Test func randomSequencesMatchTheSequentialModel() async throws {
        let daemon = try DaemonFixture()
        let store = try daemon.client().store("article")
        var generator = SplitMix(state: 0x0A7D_9EBA)
        var blobs: [String: Data] = [:]
        for iteration in 0..<100 {
            let steps: [Step] = (0..<10).map { index in
                let id = ["a", "b"].randomElement(using: &generator)!
                switch Int.random(in: 0..<100, using: &generator) {
                case 0..<28: return .store(id, "\(iteration)-\(index)")
                case 28..<31: return .storeNothing(id)
                case 31..<36: return .storeImage(id, UInt32(index + 1))
                case 36..<38: return .storeNonImage(id)
                case 38..<68: return .load(id)
                case 68..<75: return .loadImage(id)
                case 75..<93: return .remove(id)
                default: return .removeAll
                }
            }
            let (outcomes, order) = await Self.run(steps, on: store)
            let expected = Self.expectedOutcomes(steps, blobs: &blobs)
            #expect(outcomes == expected, "iteration \(iteration): \(steps)")
            // A change's handler runs after those of every earlier call and before those of every later one.
            var latestSeen = -1, latestChangeSeen = -1
            for index in order {
                #expect(steps[index].isRead || latestSeen < index, "iteration \(iteration): handler order \(order) for \(steps)")
                #expect(latestChangeSeen < index, "iteration \(iteration): handler order \(order) for \(steps)")
                latestSeen = max(latestSeen, index)
                if !steps[index].isRead { latestChangeSeen = max(latestChangeSeen, index) }
            }
            if outcomes != expected { return }
        }
    }

    @Test func loadRightAfterRemoveOrRemoveAllLoadsNothing() async throws {
        let daemon = try DaemonFixture()
        let store = try daemon.client().store("article")
        for round in 0..<50 {
            try await store.put(Data("v\(round)".utf8), identifier: "a")
            try await store.put(Data("w\(round)".utf8), identifier: "b")
            let (outcomes, _) = await Self.run([.remove("a"), .load("a"), .load("b"), .removeAll, .load("b")], on: store)
            #expect(outcomes == ["removed true", "data nil", "data w\(round)", "removedAll", "data nil"], "round \(round)")
            if outcomes != ["removed true", "data nil", "data w\(round)", "removedAll", "data nil"] { return }
        }
    }

    @Test func loadRightAfterStoreLoadsTheNewData() async throws {
        let daemon = try DaemonFixture()
        let store = try daemon.client().store("article")
        for round in 0..<50 {
            let (outcomes, _) = await Self.run([.store("a", "new\(round)"), .load("a"), .storeImage("a", UInt32(round + 1)), .loadImage("a")], on: store)
            #expect(outcomes == ["stored a", "data new\(round)", "stored a", "image w\(round + 1)"], "round \(round)")
            if outcomes != ["stored a", "data new\(round)", "stored a", "image w\(round + 1)"] { return }
        }
    }

    /// A complete, decodable PNG one pixel high and `width` pixels wide (8-bit grey, one stored deflate block).
    static func png(width: UInt32) -> Data {
        func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        func crc32(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
            }
            return ~crc
        }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + body
            return bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed))
        }
        let row: [UInt8] = [0] + (0..<Int(width)).map { UInt8(truncatingIfNeeded: $0) }
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in row {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let length = UInt16(row.count)
        let zlib: [UInt8] = [0x78, 0x01, 0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            + row + bigEndian(b << 16 | a)
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        return Data(signature + chunk("IHDR", bigEndian(width) + bigEndian(1) + [8, 0, 0, 0, 0]) + chunk("IDAT", zlib) + chunk("IEND", []))
    }

    /// SplitMix64, so a failing sequence reproduces.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
