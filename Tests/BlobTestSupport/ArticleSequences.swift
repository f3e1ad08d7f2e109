import BlobStore
import BlobSystem
import Dispatch
import Foundation

// Random sequences of article calls, issued without waiting, checked against a sequential model.

/// One article call of a generated sequence.
package enum ArticleStep: Sendable, CustomStringConvertible {
    /// `storeData` of `value`; the provider spins `spin` times first, so it sometimes finishes late.
    case store(String, value: String, spin: Int)
    /// `storeData` whose provider returns `nil`.
    case storeNothing(String)
    /// `storeImage` of a PNG `width` pixels wide.
    case storeImage(String, width: UInt32)
    /// `storeImage` of bytes that are no image.
    case storeNonImage(String)
    case load(String)
    case loadImage(String)
    case remove(String)
    case removeAll

    /// Whether the call only reads.
    package var isRead: Bool {
        switch self {
        case .load, .loadImage: return true
        default: return false
        }
    }

    /// The step or outcome as a failure message shows it.
    package var description: String {
        switch self {
        case .store(let id, let value, _): return "store(\(id)=\(value))"
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

/// What a completion handler reported.
package enum ArticleOutcome: Equatable, Sendable, CustomStringConvertible {
    case stored(String)
    case noData
    case failed
    case data(Data?)
    case image(width: UInt32?)
    case removed(existed: Bool)
    case removedAll

    /// The step or outcome as a failure message shows it.
    package var description: String {
        switch self {
        case .stored(let id): return "stored \(id)"
        case .noData: return "noData"
        case .failed: return "failed"
        case .data(let data): return data.map { "data \(String(decoding: $0, as: UTF8.self).prefix(24))" } ?? "data nil"
        case .image(let width): return width.map { "image w\($0)" } ?? "image nil"
        case .removed(let existed): return "removed \(existed)"
        case .removedAll: return "removedAll"
        }
    }
}

/// The store as one thread doing the calls in order would see it.
package struct ArticleModel {
    private var blobs: [String: Data] = [:]

    /// An empty store.
    package init() {}

    /// Applies `step` and returns what its handler must report.
    package mutating func apply(_ step: ArticleStep) -> ArticleOutcome {
        switch step {
        case .store(let id, let value, _):
            blobs[id] = Data(value.utf8)
            return .stored(id)
        case .storeNothing:
            return .noData
        case .storeImage(let id, let width):
            blobs[id] = articlePNG(width: width)
            return .stored(id)
        case .storeNonImage:
            return .failed
        case .load(let id):
            return .data(blobs[id])
        case .loadImage(let id):
            return .image(width: blobs[id].flatMap(StoredImage.init(data:)).map { UInt32($0.info.width) })
        case .remove(let id):
            return .removed(existed: blobs.removeValue(forKey: id) != nil)
        case .removeAll:
            blobs.removeAll()
            return .removedAll
        }
    }
}

/// A complete, decodable PNG one pixel high and `width` pixels wide (8-bit grey, IDAT with one stored
/// deflate block), so it passes any image validation; the width tells versions apart.
package func articlePNG(width: UInt32) -> Data {
    func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + body
        return bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed))
    }
    let row: [UInt8] = [0] + (0..<Int(width)).map { UInt8(truncatingIfNeeded: $0) }  // filter type 0, then the pixels
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

/// Generating, running and checking sequences of article calls.
package enum ArticleSequences {
    /// A random sequence of `count` calls on a few identifiers (so that calls collide), values tagged with `tag`.
    package static func random(count: Int, tag: String, using generator: inout SplitMix64) -> [ArticleStep] {
        let identifiers = ["a", "b", "c"]
        return (0..<count).map { index in
            let id = identifiers.randomElement(using: &generator)!
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<28: return .store(id, value: "\(tag)-\(index)", spin: Int.random(in: 0..<3, using: &generator) == 0 ? 200 : 0)
            case 28..<31: return .storeNothing(id)
            case 31..<36: return .storeImage(id, width: UInt32(index + 1))
            case 36..<38: return .storeNonImage(id)
            case 38..<68: return .load(id)
            case 68..<75: return .loadImage(id)
            case 75..<93: return .remove(id)
            default: return .removeAll
            }
        }
    }

    /// Makes every call of `steps` on `store` at once, without waiting for any handler; returns each
    /// call's outcome and the order in which the handlers ran (all on one serial queue).
    package static func run<Store: ArticleDataStoring>(_ steps: [ArticleStep], on store: Store) async -> (outcomes: [ArticleOutcome?], handlerOrder: [Int]) {
        let queue = DispatchQueue(label: "article-sequence.completions")
        let recorded = Locked((outcomes: [ArticleOutcome?](repeating: nil, count: steps.count), order: [Int]()))
        let group = DispatchGroup()
        for (index, step) in steps.enumerated() {
            group.enter()
            let record: @Sendable (ArticleOutcome) -> Void = { outcome in
                recorded.withLock {
                    $0.outcomes[index] = outcome
                    $0.order.append(index)
                }
                group.leave()
            }
            let storeResult: @Sendable (StoreDataResult) -> Void = { result in
                switch result {
                case .success(let id): record(.stored(id))
                case .noData: record(.noData)
                case .failed: record(.failed)
                }
            }
            switch step {
            case .store(let id, let value, let spin):
                store.storeData({
                    for _ in 0..<spin { sched_yield() }
                    return Data(value.utf8)
                }, identifier: id, completionQueue: queue, completionHandler: storeResult)
            case .storeNothing(let id):
                store.storeData({ nil }, identifier: id, completionQueue: queue, completionHandler: storeResult)
            case .storeImage(let id, let width):
                store.storeImage(articlePNG(width: width), identifier: id, completionQueue: queue, completionHandler: storeResult)
            case .storeNonImage(let id):
                store.storeImage(Data("not an image".utf8), identifier: id, completionQueue: queue, completionHandler: storeResult)
            case .load(let id):
                store.loadData(forIdentifier: id, dataTransformer: { $0 }, completionQueue: queue) { record(.data($0)) }
            case .loadImage(let id):
                store.loadImage(forIdentifier: id, completionQueue: queue) { record(.image(width: $0.map { UInt32($0.info.width) })) }
            case .remove(let id):
                store.removeData(forIdentifier: id, completionQueue: queue) { result in
                    if case .success(let existed) = result { record(.removed(existed: existed)) } else { record(.failed) }
                }
            case .removeAll:
                store.removeAll(completionQueue: queue) { error in record(error == nil ? .removedAll : .failed) }
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: queue) { continuation.resume() } }
        return recorded.withLock { ($0.outcomes, $0.order) }
    }

    /// `nil` if the handlers ran in an order the article allows (a change's handler after those of
    /// every earlier call and before those of every later one), else the first offending pair.
    package static func handlerOrderViolation(_ order: [Int], _ steps: [ArticleStep]) -> String? {
        var latestSeen = -1
        var latestChangeSeen = -1
        for index in order {
            if !steps[index].isRead, latestSeen > index {
                return "handler of change \(index) \(steps[index]) ran after that of later call \(latestSeen) \(steps[latestSeen])"
            }
            if latestChangeSeen > index {
                return "handler of \(index) \(steps[index]) ran after that of later change \(latestChangeSeen) \(steps[latestChangeSeen])"
            }
            latestSeen = max(latestSeen, index)
            if !steps[index].isRead { latestChangeSeen = max(latestChangeSeen, index) }
        }
        return nil
    }

    /// Runs `iterations` random sequences of `length` calls against `store` and the model; returns
    /// a description of the first mismatch, or `nil`.
    package static func check<Store: ArticleDataStoring>(_ store: Store, iterations: Int, length: Int, seed: UInt64) async -> String? {
        var generator = SplitMix64(seed: seed)
        var model = ArticleModel()
        for iteration in 0..<iterations {
            let steps = random(count: length, tag: "\(iteration)", using: &generator)
            let (outcomes, order) = await run(steps, on: store)
            for (index, step) in steps.enumerated() {
                let expected = model.apply(step)
                if outcomes[index] != expected {
                    return "seed \(seed), iteration \(iteration), call \(index) \(step): got \(outcomes[index].map(\.description) ?? "nothing"), "
                        + "expected \(expected); sequence: \(steps)"
                }
            }
            if let violation = handlerOrderViolation(order, steps) {
                return "seed \(seed), iteration \(iteration): \(violation); sequence: \(steps)"
            }
        }
        return nil
    }
}
