package import BlobSystem

/// A request body of known length, sent with `Content-Length` (the gateway refuses chunked
/// uploads without one). Streamed: a file region or a source is sent piece by piece in bounded
/// memory, never gathered whole.
package enum TransportBody: Sendable {
    /// No body (`Content-Length: 0` for methods that usually carry one).
    case empty
    /// Bytes in memory.
    case bytes([UInt8])
    /// `length` bytes of an open file from `offset`, sent with `sendfile(2)`. The descriptor stays
    /// the caller's; the file offset is not moved, so the region can be sent again on a retry.
    case fileRegion(FileDescriptor, offset: Int64, length: Int64)
    /// `length` bytes pulled from `source`. It can be sent again only if not a byte was pulled yet.
    case stream(length: Int64, TransportBodySource)

    /// The Content-Length.
    package var length: Int64 {
        switch self {
        case .empty: 0
        case .bytes(let bytes): Int64(bytes.count)
        case .fileRegion(_, _, let length): length
        case .stream(let length, _): length
        }
    }
}

/// Where a streamed request body comes from: pulled by the transport's thread, piece by piece.
///
/// Called from the thread running the request, one call at a time. An `async` producer can hand its
/// chunks over through ``TransportChunkChannel``.
package protocol TransportBodySource: AnyObject, Sendable {
    /// Fills the start of `buffer` with the next bytes and returns how many (0: no more). Throws to
    /// abandon the request.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}
