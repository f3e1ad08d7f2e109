import Foundation
import FoundationNetworking
internal import BlobSystem
internal import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// One request over HTTPS: what the session's delegate hears about its task (head, body pieces,
/// end), and what the thread that started it waits for and reads.
///
/// FoundationNetworking pushes the body as fast as it arrives and cannot be paused mid-transfer,
/// so a reader slower than the network would pile the body up in memory. Instead, at most
/// `memoryLimit` bytes wait in memory; the rest spills to an unlinked temporary file (under
/// `TMPDIR`) and is read back from there, in order. Memory stays bounded whatever the body's size.
///
/// Who owns what: every field is reached under `condition`'s lock, by the delegate queue (one
/// callback at a time) and the reading thread (one at a time).
final class HTTPSExchange: @unchecked Sendable {
    private let condition = NSCondition()
    private let memoryLimit: Int
    private var task: URLSessionTask?
    private var head: HTTPURLResponse?
    private var ended = false
    private var error: (any Error)?
    private var lastProgress = ContinuousClock.now
    private var chunks: [Data] = []
    private var firstChunkOffset = 0
    private var memoryBytes = 0
    private var spill: Int32 = -1
    private var spillWritten: Int64 = 0
    private var spillRead: Int64 = 0
    private var spillFailure: String?
    private var closed = false
    private let spilled: Locked<Int64>

    init(memoryLimit: Int, spilled: Locked<Int64>) {
        self.memoryLimit = memoryLimit
        self.spilled = spilled
    }

    deinit {
        if spill >= 0 { Glibc.close(spill) }
    }

    // MARK: From the delegate queue

    func started(_ task: URLSessionTask) {
        condition.withLock { self.task = task }
    }

    func received(_ response: HTTPURLResponse) {
        condition.withLock {
            head = response
            lastProgress = .now
            condition.broadcast()
        }
    }

    func progressed() {
        condition.withLock { lastProgress = .now }
    }

    func received(_ data: Data) {
        condition.withLock {
            lastProgress = .now
            guard !closed, !data.isEmpty else { return }
            if spillWritten == spillRead, memoryBytes + data.count <= memoryLimit {
                chunks.append(data)
                memoryBytes += data.count
            } else {
                appendToSpill(data)
            }
            condition.broadcast()
        }
    }

    func completed(_ error: (any Error)?) {
        condition.withLock {
            ended = true
            self.error = error
            condition.broadcast()
        }
    }

    // MARK: From the reading thread

    /// Waits for the response head; `nil` when the task ended without one (see ``endError``), or
    /// when no progress was made for `timeout` (the task is then cancelled).
    func waitForHead(timeout: Duration) -> HTTPURLResponse? {
        condition.withLock {
            while head == nil, !ended {
                if !wait(until: lastProgress + timeout) {
                    task?.cancel()
                    return nil
                }
            }
            return head
        }
    }

    /// The task's error once it ended, if it failed.
    var endError: (any Error)? { condition.withLock { error } }

    /// Copies the next piece of the body into `destination`; `nil` at its end. Throws the task's
    /// failure, or `.timedOut` after `timeout` without a byte.
    func read(into destination: UnsafeMutableRawBufferPointer, timeout: Duration) throws(HTTPSReadFailure) -> Int? {
        guard destination.count > 0 else { return 0 }
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let first = chunks.first {
                let available = first.count - firstChunkOffset
                let count = min(available, destination.count)
                first.withUnsafeBytes { raw in
                    destination.baseAddress!.copyMemory(from: raw.baseAddress! + firstChunkOffset, byteCount: count)
                }
                if count == available {
                    chunks.removeFirst()
                    firstChunkOffset = 0
                } else {
                    firstChunkOffset += count
                }
                memoryBytes -= count
                return count
            }
            if spillRead < spillWritten {
                let wanted = Int(min(Int64(destination.count), spillWritten - spillRead))
                let count = pread(spill, destination.baseAddress!, wanted, off_t(spillRead))
                guard count > 0 else { throw .spill("reading the spill file: \(Errno(rawValue: errno))") }
                spillRead += Int64(count)
                if spillRead == spillWritten {
                    // Drained: the next pieces go to memory again, and the file's blocks are freed.
                    spillRead = 0
                    spillWritten = 0
                    _ = ftruncate(spill, 0)
                }
                return count
            }
            if let spillFailure { throw .spill(spillFailure) }
            if ended {
                if let error { throw .task(error) }
                return nil
            }
            if !wait(until: lastProgress + timeout) {
                task?.cancel()
                throw .timedOut
            }
        }
    }

    /// Stops the transfer (if still running) and drops what was buffered.
    func close() {
        condition.withLock {
            closed = true
            if !ended { task?.cancel() }
            chunks = []
            memoryBytes = 0
            if spill >= 0 {
                Glibc.close(spill)
                spill = -1
            }
        }
    }

    // MARK: Internals

    /// Waits on the condition (lock held) until woken or `deadline`; false once it has passed.
    private func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let left = ContinuousClock.now.duration(to: deadline)
        if left <= .zero { return false }
        let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
        _ = condition.wait(until: Date().addingTimeInterval(seconds))
        return true
    }

    private func appendToSpill(_ data: Data) {
        guard spillFailure == nil else { return }
        if spill < 0 {
            var template = Array((NSTemporaryDirectory() + "/s3-https-body.XXXXXX").utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard descriptor >= 0 else {
                spillFailure = "cannot create a spill file in \(NSTemporaryDirectory()): \(Errno(rawValue: errno))"
                task?.cancel()
                return
            }
            // Unlinked at once: the file lives only as long as the descriptor.
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            spill = descriptor
        }
        let written: Bool = data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = pwrite(spill, raw.baseAddress! + offset, raw.count - offset, off_t(spillWritten + Int64(offset)))
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return false }
                offset += count
            }
            return true
        }
        if written {
            spillWritten += Int64(data.count)
            spilled.withLock { $0 += Int64(data.count) }
        } else {
            spillFailure = "writing the spill file: \(Errno(rawValue: errno))"
            task?.cancel()
        }
    }
}

/// Why reading an HTTPS body failed, before it is named with the request.
enum HTTPSReadFailure: Error {
    /// The task failed (its `URLError`).
    case task(any Error)
    /// No byte within the idle timeout.
    case timedOut
    /// The spill file could not be written or read.
    case spill(String)
}
