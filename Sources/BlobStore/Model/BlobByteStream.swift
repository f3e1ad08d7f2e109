import Foundation

/// A blob's content as an `AsyncSequence` of chunks, read as it is consumed.
///
/// The stream reads one version: a put that commits while it is being read does not mix in.
public struct BlobByteStream: AsyncSequence, Sendable {
    /// Chunks of content.
    public typealias Element = Data

    /// The metadata of the version being read.
    public let metadata: BlobMetadata
    /// The byte range being read.
    public let range: Range<Int64>
    private let nextChunk: @Sendable () async throws -> Data?

    /// Creates a stream whose chunks come from `next` until it returns `nil`.
    public init(metadata: BlobMetadata, range: Range<Int64>, next: @escaping @Sendable () async throws -> Data?) {
        self.metadata = metadata
        self.range = range
        self.nextChunk = next
    }

    /// Iterates the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let nextChunk: @Sendable () async throws -> Data?
        /// The next chunk, or `nil` at the end.
        public mutating func next() async throws -> Data? { try await nextChunk() }
    }

    /// Starts iterating. Iterate once: the chunks are read from the store as they are asked for.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(nextChunk: nextChunk) }
}
