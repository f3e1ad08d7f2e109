import BlobProtocol
import BlobStore
import Foundation
import HTTP1

/// Turns an error response back into the error the embedded store would have thrown (as
/// ``BlobProtocol/ErrorCode`` rebuilds it), or a ``BlobClientError/http(status:code:message:)``.
enum ErrorMapping {
    /// What the request was about, to fill in the error's store, blob and condition.
    typealias Context = ErrorCode.RequestContext

    /// The code and message of an error body; for a body that is not one, a code made from the status.
    static func codeAndMessage(status: Int, body: [UInt8]) -> (code: String, message: String) {
        if let decoded = ErrorBody.decode(body) { return decoded }
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
        let known = ErrorCode(rawValue: code)
        if let error = known?.storeError(message: message, headers: headers, context: context) { return error }
        // An identifier the daemon refused for a rule this client does not check: its message says which.
        if known == .invalidIdentifier { return BlobClientError.http(status: status, code: code, message: message) }
        var text = message
        if let id = context.identifier {
            text += " (blob '\(id)' in store '\(context.store ?? "?")')"
        } else if let name = context.store {
            text += " (store '\(name)')"
        }
        return BlobClientError.http(status: status, code: code, message: text)
    }
}
