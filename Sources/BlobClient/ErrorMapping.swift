import BlobStore
import Foundation
import HTTP1

/// Turns an error response (`{"error":{"code":…,"message":…}}`) back into the error the embedded
/// store would have thrown, or a ``BlobClientError/http(status:code:message:)``.
enum ErrorMapping {
    /// What the request was about, to fill in the error's store, blob and condition.
    struct Context: Sendable {
        var store: String?
        var identifier: String?
        var condition: WriteCondition = .none
    }

    private struct Envelope: Decodable {
        struct Body: Decodable {
            var code: String
            var message: String
        }
        var error: Body
    }

    /// The code and message of an error body; for a body that is not one, a code made from the status.
    static func codeAndMessage(status: Int, body: [UInt8]) -> (code: String, message: String) {
        if let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(body)) {
            return (envelope.error.code, envelope.error.message)
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return ("http_\(status)", text.isEmpty ? HTTPStatus(code: status).reasonPhrase : text)
    }

    /// The error for a response with `status` ≥ 300.
    static func error(status: Int, headers: HTTPHeaders?, body: [UInt8], context: Context) -> any Error {
        let (code, message) = codeAndMessage(status: status, body: body)
        return error(status: status, code: code, message: message, headers: headers, context: context)
    }

    /// The error for a decoded error code.
    static func error(status: Int, code: String, message: String, headers: HTTPHeaders?, context: Context) -> any Error {
        let store = context.store ?? "?"
        let identifier = context.identifier ?? ""
        let reason = strippedReason(message, store: context.store)
        switch code {
        case "not_found" where context.store != nil:
            return BlobStoreError.notFound(store: store, identifier: identifier)
        case "precondition_failed":
            let expected: ETag?
            if case .ifMatch(let tag) = context.condition { expected = tag } else { expected = nil }
            // blobd sends the current version's ETag with a 412 (none when the blob is absent).
            let actual = headers?.first(name: "ETag").flatMap(ETag.init)
            return BlobStoreError.preconditionFailed(store: store, identifier: identifier, expected: expected, actual: actual)
        case "not_an_image":
            return BlobStoreError.notAnImage(store: store, identifier: identifier, reason: reason)
        case "invalid_record":
            return BlobStoreError.invalidRecord(store: store, identifier: identifier, reason: reason)
        case "invalid_metadata":
            return BlobStoreError.invalidMetadata(store: store, identifier: identifier, reason: reason)
        case "invalid_identifier":
            if let rule = BlobIdentifier.urlViolation(in: identifier) {
                return BlobStoreError.invalidIdentifier(identifier: identifier, rule: rule)
            }
            return BlobClientError.http(status: status, code: code, message: message)
        case "invalid_store_name":
            return BlobStoreError.invalidStoreName(name: store, reason: reason)
        case "invalid_query":
            return BlobStoreError.invalidQuery(store: store, reason: reason)
        case "too_large":
            let numbers = integers(in: message)
            let what = context.identifier.map { "blob '\($0)' for store '\(store)'" } ?? "request to store '\(store)'"
            return BlobStoreError.tooLarge(what: what, limit: numbers.count >= 2 ? numbers[numbers.count - 1] : -1,
                actual: numbers.count >= 2 ? numbers[numbers.count - 2] : -1)
        case "range_not_satisfiable":
            // Content-Range: bytes */size
            let size = headers?.first(name: "Content-Range").flatMap { $0.split(separator: "/").last }.flatMap { Int64($0) } ?? -1
            return BlobStoreError.rangeNotSatisfiable(store: store, identifier: identifier, size: size)
        case "store_locked":
            // blobd's message is its own `storeLocked` sentence: keep just the holder's pid from it.
            let holder = message.range(of: #"pid [0-9]+"#, options: .regularExpression).map { String(message[$0]) } ?? "unknown process"
            return BlobStoreError.storeLocked(path: "store '\(store)' (served by blobd)", holder: holder)
        case "corrupt":
            return BlobStoreError.corrupt(path: "store '\(store)' (served by blobd)", reason: reason)
        case "unsupported_format":
            return BlobStoreError.unsupportedFormat(path: "store '\(store)' (served by blobd)", found: reason)
        default:
            var text = message
            if let id = context.identifier { text += " (blob '\(id)' in store '\(store)')" } else if let name = context.store {
                text += " (store '\(name)')"
            }
            return BlobClientError.http(status: status, code: code, message: text)
        }
    }

    /// The cause part of a daemon message that is a ``BlobStoreError`` description ("…: cause"), else the message.
    static func strippedReason(_ message: String, store: String?) -> String {
        guard let store, let named = message.range(of: "store '\(store)'"),
            let colon = message.range(of: ": ", range: named.upperBound..<message.endIndex)
        else { return message }
        return String(message[colon.upperBound...])
    }

    /// The non-negative integers in `text`, in order.
    static func integers(in text: String) -> [Int64] {
        text.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
    }
}
