import BlobSystem
import Dispatch
import Foundation

/// Reads one opened blob version chunk by chunk for a ``BlobByteStream``; closes the file at the end
/// or when the stream is dropped.
final class BlobFileReader: Sendable {
    private struct State {
        var descriptor: FileDescriptor?
        var offset: Int64
    }
    /// Owned here; each chunk read holds the mutex, so chunks come in order even if `next` overlaps.
    private let state: Locked<State>
    private let path: String
    private let headerLength: Int64
    private let end: Int64
    private let chunkSize: Int
    private let queue: DispatchQueue

    init(blob: OpenedBlob, range: Range<Int64>, chunkSize: Int, queue: DispatchQueue) {
        state = Locked(State(descriptor: blob.descriptor, offset: range.lowerBound))
        path = blob.path
        headerLength = Int64(blob.headerLength)
        end = range.upperBound
        self.chunkSize = chunkSize
        self.queue = queue
    }

    deinit {
        state.withLock { state in try? state.descriptor?.close() }
    }

    /// The next chunk, read on the I/O queue; `nil` at the end of the range.
    func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try self.readChunk() }) }
        }
    }

    private func readChunk() throws -> Data? {
        try state.withLock { (state) throws -> Data? in
            guard let descriptor = state.descriptor else { return nil }
            guard state.offset < end else {
                try? descriptor.close()
                state.descriptor = nil
                return nil
            }
            var data = Data(count: Int(min(Int64(chunkSize), end - state.offset)))
            let offset = headerLength + state.offset
            let count = try io("read", path) {
                try data.withUnsafeMutableBytes { raw in try descriptor.readFully(fromAbsoluteOffset: offset, into: raw) }
            }
            guard count == data.count else { throw BlobStoreError.corrupt(path: path, reason: "content shorter than its header says") }
            state.offset += Int64(count)
            return data
        }
    }
}
