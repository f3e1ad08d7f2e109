internal import BlobSystem
import Dispatch
import Foundation

/// Reads one opened blob version chunk by chunk for a ``BlobByteStream``; closes the file at the end
/// or when the stream is dropped.
///
/// The content is checked as it goes (``ContentCheck``): the bytes before the range are hashed
/// first, and the chunk that ends the range is handed out only once the whole content (the bytes
/// after the range too) has passed; otherwise the stream throws `corrupt` instead of giving it,
/// so a damaged blob never streams complete.
final class BlobFileReader: Sendable {
    private struct State {
        var descriptor: FileDescriptor?
        var offset: Int64
        var check: ContentCheck
    }
    /// Owned here; each chunk read holds the mutex, so chunks come in order even if `next` overlaps.
    private let state: Locked<State>
    private let path: String
    private let headerLength: Int64
    private let end: Int64
    private let chunkSize: Int
    private let queue: DispatchQueue

    init(blob: OpenedBlob, range: Range<Int64>, chunkSize: Int, queue: DispatchQueue) {
        state = Locked(State(descriptor: blob.descriptor, offset: range.lowerBound, check: blob.contentCheck()))
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
                // An empty range: nothing to withhold, but the stream still ends in an error, not quietly.
                try state.check.advance(to: state.check.size, descriptor: descriptor)
                try? descriptor.close()
                state.descriptor = nil
                return nil
            }
            try state.check.advance(to: state.offset, descriptor: descriptor)  // content before the range
            var data = Data(count: Int(min(Int64(chunkSize), end - state.offset)))
            let offset = headerLength + state.offset
            let count = try io("read", path) {
                try data.withUnsafeMutableBytes { raw in try descriptor.readFully(fromAbsoluteOffset: offset, into: raw) }
            }
            guard count == data.count else { throw state.check.endsEarly(at: state.offset + Int64(count)) }
            if state.check.checked == state.offset { state.check.feed(data) }
            state.offset += Int64(count)
            // The chunk that ends the range leaves only after the whole content has passed.
            if state.offset == end { try state.check.advance(to: state.check.size, descriptor: descriptor) }
            return data
        }
    }
}
