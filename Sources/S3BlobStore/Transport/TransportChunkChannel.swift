internal import BlobSystem
import Dispatch

/// A request body fed by `async` code: the producer ``send(_:)``s chunks and ``finish()``es; the
/// transport's thread pulls them as a ``TransportBodySource``. At most ``capacity`` bytes wait in
/// between: a producer ahead of the network is suspended (never blocking a thread) until the
/// transport has sent enough.
///
/// Whoever runs the request calls ``close()`` when it ends, however it ends, so that a producer
/// still suspended in ``send(_:)`` is resumed with an error rather than left waiting.
package final class TransportChunkChannel: TransportBodySource, @unchecked Sendable {
    /// Why the producer's ``send(_:)`` failed: the request ended before taking the chunk.
    package struct Closed: Error, CustomStringConvertible {
        /// `the request ended before its body was sent`.
        package var description: String { "the request ended before its body was sent" }
    }

    /// Why the transport's read failed.
    package struct Stalled: Error, CustomStringConvertible {
        /// How long the producer sent nothing.
        package let timeout: Duration
        /// `the body's producer sent nothing for 30 s`.
        package var description: String { "the body's producer sent nothing for \(timeout.secondsText)" }
    }

    /// Bytes that may wait between producer and transport.
    package let capacity: Int
    /// Longest wait of the transport's thread for the producer's next chunk.
    package let timeout: Duration

    /// Everything is guarded by the lock; `chunkArrived` wakes the one reading thread.
    private struct State {
        var chunks: [[UInt8]] = []
        /// Bytes of `chunks[0]` already read.
        var offset = 0
        var buffered = 0
        var finished = false
        var closed = false
        var waitingProducer: CheckedContinuation<Void, any Error>?
    }

    private let state = Locked(State())
    /// Signalled for every chunk, finish and close; the reader re-checks the state after each wake,
    /// so a surplus signal costs one loop turn and nothing else.
    private let chunkArrived = DispatchSemaphore(value: 0)

    /// Creates a channel holding at most `capacity` bytes in between.
    package init(capacity: Int = 1 << 20, timeout: Duration = .seconds(30)) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
        self.timeout = timeout
    }

    /// Hands over a chunk, waiting (suspended) while the channel is full. Throws ``Closed`` once
    /// the request has ended.
    package func send(_ chunk: [UInt8]) async throws {
        guard !chunk.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, any Error>? = state.withLock { state in
                if state.closed { return .failure(Closed()) }
                state.chunks.append(chunk)
                state.buffered += chunk.count
                if state.buffered < capacity { return .success(()) }
                state.waitingProducer = continuation
                return nil
            }
            chunkArrived.signal()
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Marks the end of the body.
    package func finish() {
        state.withLock { $0.finished = true }
        chunkArrived.signal()
    }

    /// Ends the channel from the request's side: a waiting or later ``send(_:)`` throws ``Closed``,
    /// and a waiting read returns.
    package func close() {
        let producer = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.closed = true
            state.chunks.removeAll()
            state.buffered = 0
            defer { state.waitingProducer = nil }
            return state.waitingProducer
        }
        chunkArrived.signal()
        producer?.resume(throwing: Closed())
    }

    /// Copies the next bytes into `buffer` (0 at the end of the body); blocks the calling thread
    /// (the transport's, never the cooperative pool's) for at most ``timeout`` per chunk.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let (count, resume, ended) = state.withLock { state -> (Int, CheckedContinuation<Void, any Error>?, Bool) in
                if state.closed { return (0, nil, true) }
                guard !state.chunks.isEmpty else { return (0, nil, state.finished) }
                var copied = 0
                while copied < buffer.count, !state.chunks.isEmpty {
                    let chunk = state.chunks[0]
                    let take = min(buffer.count - copied, chunk.count - state.offset)
                    chunk.withUnsafeBytes { raw in
                        (buffer.baseAddress! + copied).copyMemory(from: raw.baseAddress! + state.offset, byteCount: take)
                    }
                    copied += take
                    state.offset += take
                    if state.offset == chunk.count {
                        state.chunks.removeFirst()
                        state.offset = 0
                    }
                }
                state.buffered -= copied
                var resume: CheckedContinuation<Void, any Error>?
                if state.buffered < capacity {
                    resume = state.waitingProducer
                    state.waitingProducer = nil
                }
                return (copied, resume, false)
            }
            resume?.resume()
            if count > 0 || ended { return count }
            let (seconds, attoseconds) = timeout.components
            let wait = DispatchTime.now() + .nanoseconds(Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000))
            if chunkArrived.wait(timeout: wait) == .timedOut { throw Stalled(timeout: timeout) }
        }
    }
}
