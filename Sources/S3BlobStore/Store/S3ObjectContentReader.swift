internal import BlobSystem
import BlobStore
import Foundation

/// The content of one GET answer, read as it arrives: `count` bytes after skipping `skip` (a gateway
/// that answered a range request with the whole object), checked against the blob's XXH64 ETag when
/// it is the whole content. The piece that holds the last byte is returned only once the check has
/// passed: damaged content never leaves whole.
///
/// One owner reads it at a time (``S3ContentReader``); the lock only makes the hand-over between
/// threads safe, and lets ``close()`` come from anywhere.
final class S3ObjectContentReader: S3ContentReader, @unchecked Sendable {
    private struct State {
        var response: TransportResponse?
        var skip: Int64
        var remaining: Int64
        var hasher: XXH64?
        var finished = false
    }

    private let state: Locked<State>
    private let store: S3BlobStore
    private let key: String
    private let expected: ETag
    private let context: S3ErrorContext
    /// Whether the content is checked against `expected` (it is the whole content).
    let checksContent: Bool

    /// Reads `count` bytes of `response` after `skip`; checks them against `expected` when `checks`.
    init(response: TransportResponse?, skip: Int64, count: Int64, checks: Bool, expected: ETag, store: S3BlobStore, key: String, context: S3ErrorContext) {
        state = Locked(State(response: response, skip: skip, remaining: count, hasher: checks ? XXH64() : nil))
        self.store = store
        self.key = key
        self.expected = expected
        self.context = context
        checksContent = checks
    }

    deinit { close() }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try state.withLock { state in
            if state.finished { return 0 }
            guard state.remaining > 0 else {
                try finish(&state)
                return 0
            }
            guard let response = state.response else { return 0 }
            do {
                while state.skip > 0 {
                    let want = Int(min(Int64(buffer.count), state.skip))
                    guard let count = try response.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want])) else {
                        throw store.unavailable(context, reason: "the object ended before the range's start")
                    }
                    state.skip -= Int64(count)
                }
                let want = Int(min(Int64(buffer.count), state.remaining))
                guard let count = try response.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want])) else {
                    throw store.unavailable(context, reason: "the object ended \(state.remaining) bytes short of its length")
                }
                state.hasher?.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                state.remaining -= Int64(count)
                if state.remaining == 0 { try finish(&state) }
                return count
            } catch let error as TransportError {
                close(&state)
                throw store.unavailable(.unreachable(context, error))
            } catch {
                close(&state)
                throw error
            }
        }
    }

    /// Every byte is in: checks the content, then lets the connection go back to the pool.
    private func finish(_ state: inout State) throws {
        state.finished = true
        if let hasher = state.hasher {
            let found = ETag(checksum: hasher.finalize())
            if found != expected {
                close(&state)
                throw BlobStoreError.corrupt(
                    path: store.objectURI(key), reason: "the content's XXH64 is \(found), its x-amz-meta-blob says \(expected)")
            }
        }
        // The body is complete (the response already went back to the pool) unless the gateway sent
        // more than asked (a whole object for a range): closing drops that connection.
        if let response = state.response, !response.isComplete { response.close() }
        state.response = nil
    }

    private func close(_ state: inout State) {
        state.finished = true
        state.response?.close()
        state.response = nil
    }

    func close() {
        state.withLock { close(&$0) }
    }

    /// Reads everything left into memory.
    func readAll(expectedCount: Int64) throws -> Data {
        var data = Data(count: Int(expectedCount))
        var filled = 0
        try data.withUnsafeMutableBytes { raw in
            while filled < raw.count {
                let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                if count == 0 { break }
                filled += count
            }
            // Runs the check of empty content, and of content whose last read filled the buffer.
            var spare: UInt8 = 0
            _ = try withUnsafeMutableBytes(of: &spare) { try read(into: $0) }
        }
        return data.prefix(filled)
    }
}
