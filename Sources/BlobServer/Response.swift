import BlobProtocol
import BlobStore
import Foundation
import HTTP1

/// A response ready to be written: its status, extra header lines, and a body in memory or in a file.
///
/// Built on whichever thread has the answer (a loop, a store queue, a task) and handed to the
/// connection's loop, which adds the framing headers and writes it.
struct Response: Sendable {
    /// Content bytes to send with `sendfile` after the head.
    struct FileBody: Sendable {
        /// The open blob version (closed by the connection once sent).
        var handle: BlobReadHandle
        /// Absolute file offset of the first byte.
        var offset: Int64
        /// Number of bytes.
        var count: Int64
    }

    /// The status.
    var status: HTTPStatus
    /// Header lines (each ending in CR LF), except `Content-Length` and `Connection`.
    var headerLines: [UInt8] = []
    /// The in-memory body.
    var body: [UInt8] = []
    /// An in-memory body as the store read it, sent instead of `body` when set: copied once, into the
    /// output, where `body` would take a second copy (a blob's content arrives as `Data`).
    var content: Data?
    /// A body sent from a file instead of `body`.
    var file: FileBody?
    /// `Content-Length` to announce instead of the body's size (HEAD).
    var announcedLength: Int64?
    /// Whether the body is left out (HEAD).
    var omitBody = false
    /// Whether the connection closes after this response.
    var closeConnection = false
    /// Whether the body is delimited by closing the connection, without `Content-Length` (a HEAD
    /// of `/v1/events` announces the stream a GET would get).
    var closeDelimited = false

    init(status: HTTPStatus) { self.status = status }

    /// A JSON response.
    init(status: HTTPStatus, json: [UInt8]) {
        self.status = status
        HTTPSerializer.appendHeader(.contentType, MediaType.json, into: &headerLines)
        body = json
    }

    /// Adds a header line.
    mutating func header(_ name: KnownHeader, _ value: String) {
        HTTPSerializer.appendHeader(name, value, into: &headerLines)
    }

    /// Adds a header line whose value is in a caller's buffer.
    mutating func header(_ name: KnownHeader, bytes: UnsafeBufferPointer<UInt8>) {
        HTTPSerializer.appendHeader(name, bytes: bytes, into: &headerLines)
    }

    /// Adds a header line with a constant name and a value in a caller's buffer.
    mutating func header(name: StaticString, bytes: UnsafeBufferPointer<UInt8>) {
        HTTPSerializer.appendHeader(name: name, bytes: bytes, into: &headerLines)
    }

    /// Adds a header line with any name.
    mutating func header(_ name: String, _ value: String) {
        HTTPSerializer.appendHeader(name: name, value: value, into: &headerLines)
    }

    /// Whether the status forbids a body and `Content-Length` (1xx, 204, 304).
    var hasNoContent: Bool { status.code < 200 || status.code == 204 || status.code == 304 }

    /// Appends the head (and the in-memory body) to `out`; `dateLine` is the `Date` header line.
    func serialize(version: HTTPVersion, close: Bool, dateLine: [UInt8], into out: inout [UInt8]) {
        HTTPSerializer.appendStatusLine(status, version: version, into: &out)
        out.append(contentsOf: dateLine)
        out.append(contentsOf: headerLines)
        if !hasNoContent && !closeDelimited {
            let length = announcedLength ?? file?.count ?? Int64(inMemoryCount)
            HTTPSerializer.appendHeader(.contentLength, length, into: &out)
        }
        if close {
            HTTPSerializer.appendHeader(.connection, "close", into: &out)
        } else if version == .http1_0 {
            HTTPSerializer.appendHeader(.connection, "keep-alive", into: &out)
        }
        HTTPSerializer.appendEndOfHead(into: &out)
        if !omitBody && !hasNoContent {
            if let content {
                content.withUnsafeBytes { raw in out.append(contentsOf: raw.assumingMemoryBound(to: UInt8.self)) }
            } else {
                out.append(contentsOf: body)
            }
        }
    }

    /// The size of the in-memory body (`content` or `body`).
    var inMemoryCount: Int { content?.count ?? body.count }
}

extension Response {
    /// The head a GET of `/v1/events` starts its stream with, as the answer to a HEAD: no
    /// `Content-Length` (the stream is delimited by the connection's end), and the connection closes.
    static func eventStreamHead() -> Response {
        var response = Response(status: .ok)
        response.header(.contentType, MediaType.eventStream)
        response.header(.cacheControl, "no-cache")
        response.omitBody = true
        response.closeDelimited = true
        response.closeConnection = true
        return response
    }
}
