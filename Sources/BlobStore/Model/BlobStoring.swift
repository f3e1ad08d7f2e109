import Foundation

/// The operations every blob store offers: the file-backed ``PersistentDataStore``, the
/// ``InMemoryBlobStore`` for tests and previews, and (later) the daemon client.
///
/// Code written against this protocol moves between them by changing the line that creates the store.
public protocol BlobStoring: Sendable {
    /// The store's name.
    var name: String { get }

    /// Stores `data` under `identifier` (a new UUID string when `nil`) and returns the new version's metadata.
    @discardableResult
    func put(_ data: Data, identifier: String?, options: PutOptions) async throws -> BlobMetadata

    /// Stores the chunks of `chunks` as one blob without holding it all in memory.
    @discardableResult
    func put<Chunks: AsyncSequence>(chunks: Chunks, identifier: String?, options: PutOptions) async throws -> BlobMetadata
    where Chunks.Element == Data

    /// Stores the contents of the file at `fileURL`, streamed.
    @discardableResult
    func put(contentsOf fileURL: URL, identifier: String?, options: PutOptions) async throws -> BlobMetadata

    /// The whole content of a blob.
    func get(_ identifier: String) async throws -> Data

    /// The bytes `range` of a blob (clamped at its end); throws `rangeNotSatisfiable` if it starts past the end.
    func get(_ identifier: String, range: Range<Int64>) async throws -> Data

    /// A blob's content (or part of it) as chunks of at most `chunkSize` bytes (values below 1 mean 1),
    /// read as they are consumed from the version that was current when the stream was made.
    func stream(_ identifier: String, range: Range<Int64>?, chunkSize: Int) async throws -> BlobByteStream

    /// Writes a blob's content to `fileURL` (replacing it only once complete) and returns its metadata.
    func download(_ identifier: String, to fileURL: URL) async throws -> BlobMetadata

    /// The metadata of a blob; throws `notFound`.
    func head(_ identifier: String) async throws -> BlobMetadata

    /// Whether a blob exists.
    func exists(_ identifier: String) async throws -> Bool

    /// Removes a blob, if `condition` holds; returns whether it existed.
    @discardableResult
    func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool

    /// Removes every blob of the store; a ``BlobChange/Kind/removedAll`` event is posted even if it was empty.
    func removeAll() async throws

    /// Count and total size of the blobs.
    func statistics() async throws -> StoreStatistics

    /// One page of blobs' metadata.
    func list(_ query: ListQuery) async throws -> ListPage

    /// Changes committed from now on, in commit order, until the stream is dropped.
    ///
    /// The stream buffers without limit: keep consuming it, or drop it, or it holds every event since.
    func changes() -> AsyncStream<BlobChange>
}

extension BlobStoring {
    /// Stores `data` under `identifier` (a new UUID string when `nil`).
    @discardableResult
    public func put(_ data: Data, identifier: String? = nil, contentType: String? = nil) async throws -> BlobMetadata {
        try await put(data, identifier: identifier, options: PutOptions(contentType: contentType))
    }

    /// Removes a blob unconditionally; returns whether it existed.
    @discardableResult
    public func remove(_ identifier: String) async throws -> Bool {
        try await remove(identifier, condition: .none)
    }

    /// A blob's whole content as chunks of 256 KiB.
    public func stream(_ identifier: String) async throws -> BlobByteStream {
        try await stream(identifier, range: nil, chunkSize: 256 * 1024)
    }

    /// Every blob matching `query`, page after page (the query's cursor is the starting point).
    public func listAll(_ query: ListQuery = ListQuery()) async throws -> [BlobMetadata] {
        var query = query
        var all: [BlobMetadata] = []
        while true {
            let page = try await list(query)
            all += page.items
            guard let next = page.nextCursor else { return all }
            query.cursor = next
        }
    }

    /// Stores a recognised image (PNG, JPEG, GIF, WebP, BMP, TIFF, HEIC, AVIF) and records its type and pixel size.
    ///
    /// Throws ``BlobStoreError/notAnImage(store:identifier:reason:)`` for anything else; nothing is stored then.
    @discardableResult
    public func putImage(_ data: Data, identifier: String? = nil, userMetadata: [String: String] = [:]) async throws -> BlobMetadata {
        try await put(data, identifier: identifier, options: PutOptions(userMetadata: userMetadata, validation: .image))
    }

    /// Stores `value` as a JSON record (`application/json`).
    @discardableResult
    public func storeRecord(_ value: some Encodable, identifier: String? = nil) async throws -> BlobMetadata {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw BlobStoreError.invalidRecord(store: name, identifier: identifier ?? "(new)", reason: "encoding failed: \(error)")
        }
        return try await put(data, identifier: identifier, options: PutOptions(contentType: "application/json", validation: .record))
    }

    /// Loads the JSON record `identifier` as a `type`; a decoding failure names the blob and the problem.
    public func loadRecord<Value: Decodable>(_ type: Value.Type, identifier: String) async throws -> Value {
        let data = try await get(identifier)
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw BlobStoreError.invalidRecord(store: name, identifier: identifier, reason: RecordValidation.describe(error))
        }
    }
}
