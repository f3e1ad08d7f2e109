import BlobStore
import Dispatch
import Foundation
import Synchronization

/// Identifiers for the `scale` scenario, computed from an index instead of stored: a million UUID
/// strings would cost the bench ~80 MB and their generation time, and the daemon tests need to name
/// any blob again from its index alone.
///
/// 32 lowercase hex digits (the length of a UUID without dashes), spread uniformly over the
/// identifier space like random UUIDs, so puts land in every bucket and every bucket splits, as
/// with real random keys. The first 16 digits are a bijection of the index, so no two collide.
enum ScaleIdentifiers {
    /// The identifier of blob number `index`.
    static func make(_ index: Int) -> String {
        let high = mix(UInt64(index))
        let low = mix(UInt64(index) ^ 0x5851_F42D_4C95_7F2D)
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: 0, count: 32)
        for position in 0..<16 {
            bytes[position] = digits[Int((high >> UInt64(60 - 4 * position)) & 0xF)]
            bytes[16 + position] = digits[Int((low >> UInt64(60 - 4 * position)) & 0xF)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// SplitMix64's finaliser: a bijection on 64-bit values that scatters neighbouring indices.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Filling a store as fast as it takes blobs.
enum ScaleFill {
    /// Puts blobs number `indices` (see ``ScaleIdentifiers``) with `content` into `store`, from
    /// `writers` threads. Each writer feeds the blocking upload API (`beginUpload`, `append`,
    /// `commit`) and keeps up to `window` commits in flight instead of waiting for each one, so the
    /// store's committer always finds a batch waiting (group commit) while the writers prepare the
    /// next temp files. Prints progress every `progressEvery` blobs. Returns the elapsed time.
    static func fill(
        _ store: PersistentDataStore, name: String, indices: Range<Int>, content: Data, writers: Int = 2, window: Int = 64,
        progressEvery: Int = 100_000
    ) async throws -> Duration {
        let progress = Progress(name: name, total: indices.count, every: progressEvery)
        let clock = ContinuousClock()
        let started = clock.now
        try await Workers.run(writers) { writer in
            // Starts at 0 and is signalled up to `window`: libdispatch traps when a semaphore is
            // released with a value below its initial one, which an early error would otherwise cause.
            let slots = DispatchSemaphore(value: 0)
            for _ in 0..<window { slots.signal() }
            let options = PutOptions()
            for index in stride(from: indices.lowerBound + writer, to: indices.upperBound, by: writers) {
                slots.wait()
                if let error = progress.firstError { throw error }
                let upload = try store.beginUpload(identifier: ScaleIdentifiers.make(index), options: options)
                try content.withUnsafeBytes { try upload.append($0) }
                upload.commit { result in
                    progress.completed(result)
                    slots.signal()
                }
            }
            for _ in 0..<window { slots.wait() }
            if let error = progress.firstError { throw error }
        }
        return started.duration(to: clock.now)
    }

    /// Counts acknowledged puts (from the store's completion queues) and prints a line every `every`.
    private final class Progress: Sendable {
        let name: String
        let total: Int
        let every: Int
        private let done = Atomic<Int>(0)
        private let error = Locked<(any Error)?>(nil)
        /// When the fill started and when the last progress line was printed.
        private let times: Locked<(start: ContinuousClock.Instant, last: ContinuousClock.Instant)>

        /// Counts `total` puts into the store `name`, printing every `every`.
        init(name: String, total: Int, every: Int) {
            self.name = name
            self.total = total
            self.every = every
            let now = ContinuousClock.now
            times = Locked((now, now))
        }

        /// The first failed commit, if any.
        var firstError: (any Error)? { error.withLock { $0 } }

        /// Records one acknowledged (or failed) put; called on the store's completion queues.
        func completed(_ result: Result<BlobMetadata, any Error>) {
            if case .failure(let failure) = result { error.withLock { if $0 == nil { $0 = failure } } }
            let count = done.add(1, ordering: .relaxed).newValue
            guard count % every == 0 else { return }
            let now = ContinuousClock.now
            let (start, last) = times.withLock { times in
                defer { times.last = now }
                return times
            }
            let total = ChildRun.milliseconds(start.duration(to: now)) / 1000
            let recent = ChildRun.milliseconds(last.duration(to: now)) / 1000
            Console.progress(
                "[scale] \(name): \(ScaleScenario.countLabel(count))/\(ScaleScenario.countLabel(self.total)) blobs in "
                    + "\(Report.fixed(total)) s, \(Report.compact(Double(count) / max(total, 1e-9)))/s "
                    + "(last \(ScaleScenario.countLabel(every)): \(Report.compact(Double(every) / max(recent, 1e-9)))/s)")
        }
    }
}
