import BlobProtocol
import BlobStore
internal import BlobSystem
import Foundation
import HTTP1

/// A store served by `blobd`, with the same operations and errors as the embedded stores.
///
/// Get one from ``BlobClient/store(_:)``. Every call is one HTTP exchange on a pooled keep-alive
/// connection (``stream(_:range:chunkSize:)`` keeps its connection until the stream ends or is dropped).
public final class RemoteBlobStore: BlobStoring {
    /// The store's name.
    public let name: String
    /// The client whose connections this store uses.
    public let client: BlobClient
    /// The order of the article calls made through this instance (see `RemoteBlobStore+Article.swift`).
    public let articleCallOrder = ArticleCallOrder()

    init(name: String, client: BlobClient) {
        self.name = name
        self.client = client
    }

    // MARK: Writing

    /// Stores `data` under `identifier` (a new UUID string when `nil`); `201`/`200` from `PUT`.
    @discardableResult
    public func put(_ data: Data, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        let id = identifier ?? UUID().uuidString
        var request = try putRequest(id, options: options)
        request.body = .data(data)
        return try await finishPut(client.send(request, context: context(id, options.condition)))
    }

    /// Streams the chunks with `Transfer-Encoding: chunked`; never replayed (the sequence is consumed).
    @discardableResult
    public func put<Chunks: AsyncSequence>(chunks: Chunks, identifier: String?, options: PutOptions) async throws -> BlobMetadata
    where Chunks.Element == Data {
        let id = identifier ?? UUID().uuidString
        var request = try putRequest(id, options: options)
        request.body = .streamed
        let streamed = request
        let transport = client.transport
        let timeout = client.configuration.requestTimeout
        let connection = try await BlockingThreads.run { try transport.startStreamed(streamed) }
        var sendFailure: TransportError?
        do {
            for try await chunk in chunks where !chunk.isEmpty {
                // Head, payload and end sent from where they are: copying the payload into a framed
                // array runs byte by byte in debug builds.
                var head: [UInt8] = []
                ChunkedEncoder.appendChunkHeader(length: chunk.count, into: &head)
                var end: [UInt8] = []
                ChunkedEncoder.appendChunkEnd(into: &end)
                let (headBytes, endBytes) = (head, end)
                sendFailure = try await BlockingThreads.run { () -> TransportError? in
                    do {
                        try connection.sendRequest(headBytes, timeout: timeout)
                        try chunk.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in try connection.sendRequest(raw, timeout: timeout) }
                        try connection.sendRequest(endBytes, timeout: timeout)
                    } catch let error as TransportError { return error }
                    return nil
                }
                if sendFailure != nil { break }  // The daemon answered early; read its answer.
            }
            if sendFailure == nil {
                var last: [UInt8] = []
                ChunkedEncoder.appendLastChunk(into: &last)
                let bytes = last
                sendFailure = try await BlockingThreads.run { () -> TransportError? in
                    do { try connection.sendRequest(bytes, timeout: timeout) } catch let error as TransportError { return error }
                    return nil
                }
            }
        } catch {
            connection.close()  // The daemon sees a truncated body and stores nothing.
            throw error
        }
        let response: FullResponse
        do {
            response = try await BlockingThreads.run { try transport.finishStreamed(connection, method: .put) }
        } catch {
            throw sendFailure?.publicError ?? error
        }
        if response.status >= 300 {
            throw ErrorMapping.error(status: response.status, headers: response.headers, body: response.body, context: context(id, options.condition))
        }
        return try finishPut(response)
    }

    /// Streams the file with `Content-Length` (replayable: a stale pooled connection is retried once).
    @discardableResult
    public func put(contentsOf fileURL: URL, identifier: String?, options: PutOptions) async throws -> BlobMetadata {
        let id = identifier ?? UUID().uuidString
        var request = try putRequest(id, options: options)
        request.body = .file(path: fileURL.path)
        return try await finishPut(client.send(request, context: context(id, options.condition)))
    }

    /// Removes a blob if `condition` holds (`DELETE` with `If-Match`); returns whether it existed.
    ///
    /// ``WriteCondition/ifNoneMatch`` ("only if absent") removes nothing: it fails if the blob exists.
    @discardableResult
    public func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        try BlobIdentifier.validate(identifier)
        if case .ifNoneMatch = condition {
            guard let current = try await currentMetadata(identifier) else { return false }
            throw BlobStoreError.preconditionFailed(store: name, identifier: identifier, expected: nil, actual: current.etag)
        }
        var request = Request(method: .delete, target: blobTarget(identifier))
        if case .ifMatch(let tag) = condition { request.headers.append((name: KnownHeader.ifMatch.text, value: MetadataHeaders.etagValue(tag))) }
        let response = try await client.send(request, context: context(identifier, condition), accepting: [404])
        return response.status != 404
    }

    /// Removes every blob of the store (`DELETE /v1/stores/{store}/blobs`).
    public func removeAll() async throws {
        _ = try await client.send(Request(method: .delete, target: blobsTarget), context: ErrorMapping.Context(store: name))
    }

    // MARK: Reading

    /// The whole content of a blob.
    public func get(_ identifier: String) async throws -> Data {
        try BlobIdentifier.validate(identifier)
        let response = try await client.send(Request(method: .get, target: blobTarget(identifier)), context: context(identifier))
        return Data(response.body)
    }

    /// The bytes `range` of a blob (`Range: bytes=a-b`), clamped at its end.
    public func get(_ identifier: String, range: Range<Int64>) async throws -> Data {
        try BlobIdentifier.validate(identifier)
        guard range.lowerBound >= 0 else {
            throw BlobStoreError.rangeNotSatisfiable(store: name, identifier: identifier, size: try await head(identifier).size)
        }
        if range.isEmpty {
            // HTTP cannot ask for zero bytes; answer as the embedded store does.
            let size = try await head(identifier).size
            // An empty range may start at the very end, as in the embedded stores.
            if range.lowerBound > size { throw BlobStoreError.rangeNotSatisfiable(store: name, identifier: identifier, size: size) }
            return Data()
        }
        var request = Request(method: .get, target: blobTarget(identifier))
        request.headers.append((name: KnownHeader.range.text, value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)"))
        let response = try await client.send(request, context: context(identifier))
        return Data(response.body)
    }

    /// The content (or `range` of it) as chunks of `chunkSize` bytes, read from the socket as they are consumed.
    ///
    /// The stream's ``BlobByteStream/metadata`` comes from the response headers, so its `modified`
    /// date has one-second precision.
    public func stream(_ identifier: String, range: Range<Int64>?, chunkSize: Int) async throws -> BlobByteStream {
        try BlobIdentifier.validate(identifier)
        if let range, range.isEmpty || range.lowerBound < 0 {
            let metadata = try await head(identifier)
            if range.lowerBound < 0 || range.lowerBound > metadata.size {
                throw BlobStoreError.rangeNotSatisfiable(store: name, identifier: identifier, size: metadata.size)
            }
            let empty = range.lowerBound..<range.lowerBound
            return BlobByteStream(metadata: metadata, range: empty, next: { nil })
        }
        var request = Request(method: .get, target: blobTarget(identifier))
        if let range { request.headers.append((name: KnownHeader.range.text, value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        let transport = client.transport
        let prepared = request
        let (connection, reader) = try await BlockingThreads.run { try transport.start(prepared) }
        let status = reader.response.status.code
        let headers = reader.response.headers
        guard status == 200 || status == 206 else {
            let failed = reader
            let body = try await BlockingThreads.run { () throws -> [UInt8] in
                var reader = failed
                do {
                    let bytes = try reader.readAll(from: connection)
                    transport.finish(connection, reader: reader)
                    return bytes
                } catch {
                    connection.close()
                    return []
                }
            }
            throw ErrorMapping.error(status: status, headers: headers, body: body, context: context(identifier))
        }
        var bodyLength: Int64 = 0
        if case .contentLength(let length) = reader.response.framing { bodyLength = length }
        var total = bodyLength
        var served = 0..<bodyLength
        if status == 206, let text = headers.first(.contentRange), let parsed = Self.contentRange(text) {
            total = parsed.size
            served = parsed.range
        }
        let metadata: BlobMetadata
        do {
            metadata = try WireDecoding.metadata(identifier: identifier, headers: headers, size: total)
        } catch {
            connection.close()
            throw error
        }
        let body = ResponseBodyStream(connection: connection, reader: reader, transport: transport, chunkSize: max(1, chunkSize))
        return BlobByteStream(metadata: metadata, range: served, next: { try await body.next() })
    }

    /// Streams the blob into a temporary file beside `fileURL`, then renames it over `fileURL`; the
    /// metadata returned is the stream's (its `modified` date has one-second precision).
    public func download(_ identifier: String, to fileURL: URL) async throws -> BlobMetadata {
        let stream = try await stream(identifier, range: nil, chunkSize: 1 << 20)
        let directory = fileURL.deletingLastPathComponent().path
        let temporary = directory + "/.\(fileURL.lastPathComponent).\(UUID().uuidString).download"
        let file: FileDescriptor
        do { file = try FileDescriptor.open(temporary, [.writeOnly, .create, .exclusive], permissions: 0o644) } catch {
            throw BlobStoreError.io(operation: "create", path: temporary, errno: error)
        }
        do {
            for try await chunk in stream {
                try await BlockingThreads.run {
                    do { try chunk.withUnsafeBytes { try file.writeAll($0) } } catch let error as Errno {
                        throw BlobStoreError.io(operation: "write", path: temporary, errno: error)
                    }
                }
            }
            try file.close()
            do { try FileSystem.rename(temporary, to: fileURL.path) } catch {
                throw BlobStoreError.io(operation: "rename", path: fileURL.path, errno: error)
            }
        } catch {
            try? file.close()
            _ = try? FileSystem.unlinkIfExists(temporary)
            throw error
        }
        return stream.metadata
    }

    /// The metadata of a blob (exact, from the JSON listing); throws `notFound`.
    public func head(_ identifier: String) async throws -> BlobMetadata {
        try BlobIdentifier.validate(identifier)
        guard let metadata = try await currentMetadata(identifier) else {
            throw BlobStoreError.notFound(store: name, identifier: identifier)
        }
        return metadata
    }

    /// Whether a blob exists (`HEAD`).
    public func exists(_ identifier: String) async throws -> Bool {
        try BlobIdentifier.validate(identifier)
        let response = try await client.send(Request(method: .head, target: blobTarget(identifier)), context: context(identifier), accepting: [404])
        return response.status != 404
    }

    /// Count and total size, from `GET /v1/stores` (zero for a store never written). The daemon
    /// reports totals only for the stores it has open, so for one it has not opened yet this first
    /// has it open the store (by listing one item), as any use of the store through it would.
    public func statistics() async throws -> StoreStatistics {
        for attempt in 0..<2 {
            guard let summary = try await client.stores().first(where: { $0.name == name }) else { return StoreStatistics(count: 0, bytes: 0) }
            if let totals = summary.statistics { return totals }
            if let holder = summary.heldBy {
                throw BlobStoreError.storeLocked(path: ErrorCode.servedPath(store: name), holder: holder)
            }
            if attempt == 0 { _ = try await list(ListQuery(limit: 1)) }
        }
        throw BlobClientError.protocolError("blobd lists store '\(name)' without totals after opening it")
    }

    /// One page of `GET /v1/stores/{store}/blobs` (an empty last page for a store never written).
    public func list(_ query: ListQuery) async throws -> ListPage {
        guard (1...ListQuery.maximumLimit).contains(query.limit) else {
            throw BlobStoreError.invalidQuery(store: name, reason: "limit must be 1...\(ListQuery.maximumLimit) (got \(query.limit))")
        }
        // The daemon reads an empty cursor as none; the embedded stores refuse it, and so does this one.
        if query.cursor == "" {
            throw BlobStoreError.invalidQuery(store: name, reason: "malformed cursor '' for sort '\(query.sort.rawValue)'")
        }
        let request = Request(method: .get, target: blobsTarget + "?" + ListParameters.queryString(query))
        let response = try await client.send(request, context: ErrorMapping.Context(store: name), accepting: [404])
        if response.status == 404 { return ListPage(items: [], nextCursor: nil) }
        return try WireDecoding.page(from: response.body)
    }

    /// This store's changes from the daemon's feed; ends when the feed fails for good (see ``BlobClient/changes(store:)``).
    ///
    /// Unlike the embedded stores' streams, which subscribe inside the call, this one starts when
    /// the daemon receives the feed's request, on a background thread shortly after the call:
    /// changes committed in between are not delivered.
    public func changes() -> AsyncStream<BlobChange> {
        let feed = client.changes(store: name)
        return AsyncStream { continuation in
            let task = Task {
                do { for try await change in feed { continuation.yield(change) } } catch {}
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Helpers

    private var blobsTarget: String { Route.blobs(store: name).target }

    private func blobTarget(_ identifier: String) -> String { Route.blob(store: name, identifier: identifier).target }

    private func context(_ identifier: String, _ condition: WriteCondition = .none) -> ErrorMapping.Context {
        ErrorMapping.Context(store: name, identifier: identifier, condition: condition)
    }

    /// The exact metadata of `identifier`, or `nil`: the first listed identifier with it as prefix is itself if it exists.
    private func currentMetadata(_ identifier: String) async throws -> BlobMetadata? {
        let request = Request(method: .get, target: blobsTarget + "?" + ListParameters.queryString(ListQuery(prefix: identifier, limit: 1)))
        let response = try await client.send(request, context: context(identifier), accepting: [404])
        if response.status == 404 { return nil }
        let page = try WireDecoding.page(from: response.body)
        guard let first = page.items.first, first.identifier == identifier else { return nil }
        return first
    }

    private func putRequest(_ identifier: String, options: PutOptions) throws -> Request {
        try BlobIdentifier.validate(identifier)
        if let reason = UserMetadataRules.violation(contentType: options.contentType, userMetadata: options.userMetadata) {
            throw BlobStoreError.invalidMetadata(store: name, identifier: identifier, reason: reason)
        }
        var request = Request(method: .put, target: blobTarget(identifier))
        if let type = options.contentType { request.headers.append((name: KnownHeader.contentType.text, value: type)) }
        for (key, value) in options.userMetadata.sorted(by: { $0.key < $1.key }) {
            request.headers.append((name: HeaderName.metaPrefix + key, value: value))
        }
        if let value = MetadataHeaders.validateValue(options.validation) {
            request.headers.append((name: HeaderName.validate.rawValue, value: value))
        }
        switch options.condition {
        case .none: break
        case .ifNoneMatch: request.headers.append((name: KnownHeader.ifNoneMatch.text, value: "*"))
        case .ifMatch(let tag): request.headers.append((name: KnownHeader.ifMatch.text, value: MetadataHeaders.etagValue(tag)))
        }
        for field in ExpiryHeaders.requestFields(options.expiry) { request.headers.append(field) }
        return request
    }

    private func finishPut(_ response: FullResponse) throws -> BlobMetadata {
        try WireDecoding.metadata(from: response.body)
    }

    /// Parses `bytes a-b/size`.
    static func contentRange(_ text: String) -> (range: Range<Int64>, size: Int64)? {
        guard text.hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let size = Int64(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-")
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]) else { return nil }
        return (first..<(last + 1), size)
    }
}

/// The body of a streamed GET, read from its connection as chunks are asked for; the connection
/// goes back to the pool once the body is complete, and is closed if the stream is dropped early.
final class ResponseBodyStream: Sendable {
    private struct State {
        var connection: Connection?
        var reader: ResponseReader
    }
    private let state: Locked<State>
    private let transport: Transport
    private let chunkSize: Int

    init(connection: Connection, reader: ResponseReader, transport: Transport, chunkSize: Int) {
        state = Locked(State(connection: connection, reader: reader))
        self.transport = transport
        self.chunkSize = chunkSize
    }

    deinit {
        state.withLock { $0.connection?.close() }
    }

    /// The next chunk (exactly `chunkSize` bytes except the last), or `nil` at the end.
    func next() async throws -> Data? {
        try await BlockingThreads.run { try self.readChunk() }
    }

    private func readChunk() throws -> Data? {
        try state.withLock { state -> Data? in
            guard let connection = state.connection else { return nil }
            // One chunk-sized buffer filled in place (socket → buffer, or buffered bytes by memcpy).
            var chunk = Data(count: chunkSize)
            var filled = 0
            do {
                try chunk.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) throws in
                    while filled < raw.count, let count = try state.reader.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]), from: connection) {
                        filled += count
                    }
                }
            } catch let error as TransportError {
                connection.close()
                state.connection = nil
                throw error.publicError
            }
            if state.reader.isComplete {
                transport.finish(connection, reader: state.reader)
                state.connection = nil
            }
            if filled == 0 { return nil }
            if filled < chunk.count { chunk.count = filled }
            return chunk
        }
    }
}
