import Foundation
import HTTP1

/// One request to the daemon, complete except for a streamed body.
struct Request: Sendable {
    /// What follows the head.
    enum Body: Sendable {
        /// No body.
        case none
        /// Bytes in memory (replayable).
        case data(Data)
        /// The contents of a file, sent with `Content-Length` (replayable: the file is reopened).
        case file(path: String)
        /// `Transfer-Encoding: chunked`, written by the caller after the head.
        case streamed
    }

    var method: HTTPMethod
    /// Percent-encoded path and query.
    var target: String
    /// Extra header fields (framing and `Host` are added when serialized).
    var headers: [(name: String, value: String)] = []
    var body: Body = .none

    /// Whether the request may be sent again on a fresh connection after a stale one failed:
    /// every method this client uses is idempotent, and a body is replayable unless streamed.
    var isReplayable: Bool {
        switch method {
        case .get, .head, .delete, .put: break
        default: return false
        }
        if case .streamed = body { return false }
        return true
    }

    /// The head, with `Host` and framing fields; `contentLength` for a file body.
    func serializedHead(contentLength: Int64?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        HTTPSerializer.appendRequestLine(method: method, target: target, into: &bytes)
        HTTPSerializer.appendHeader(.host, "blobd", into: &bytes)
        for field in headers { HTTPSerializer.appendHeader(name: field.name, value: field.value, into: &bytes) }
        switch body {
        case .none:
            if method == .put { HTTPSerializer.appendHeader(.contentLength, 0, into: &bytes) }
        case .data(let data):
            HTTPSerializer.appendHeader(.contentLength, Int64(data.count), into: &bytes)
        case .file:
            HTTPSerializer.appendHeader(.contentLength, contentLength ?? 0, into: &bytes)
        case .streamed:
            HTTPSerializer.appendHeader(.transferEncoding, "chunked", into: &bytes)
        }
        HTTPSerializer.appendEndOfHead(into: &bytes)
        return bytes
    }
}

/// A whole response: status, fields and body.
struct FullResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
}

extension KnownHeader {
    /// The conventional spelling as a String, for ``Request/headers``.
    var text: String { name.description }
}
