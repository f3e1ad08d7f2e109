import BlobProtocol
import BlobStore
import HTTP1

/// An error as the protocol states it: an HTTP status, a stable code, and a sentence.
struct APIError: Error, Sendable {
    /// The response status.
    var status: HTTPStatus
    /// The stable machine-readable code (see PROTOCOL.md, "Errors").
    var code: ErrorCode
    /// The human-readable message.
    var message: String
    /// For `412`: the current version's ETag (`nil` when the blob is absent), sent as the `ETag` header
    /// so a client can retry its compare-and-swap without another request.
    var currentETag: ETag?

    /// An error with `code`'s status, or `status` (the codec's, for `bad_request`).
    init(_ code: ErrorCode, status: HTTPStatus? = nil, _ message: String) {
        self.status = status ?? code.status
        self.code = code
        self.message = message
    }

    /// The refusal of a request whose path (still encoded) is `path`.
    init(_ error: RouteError, path: String) {
        self.init(error.code, error.message(path: path))
    }

    /// Maps any error a store call throws; unknown errors become `500 internal_error`.
    init(_ error: any Error) {
        if let refusal = error as? UnsupportedPolicy {
            self.init(.unsupportedPolicy, refusal.description)
            return
        }
        guard let error = error as? BlobStoreError else {
            self.init(.internalError, "\(error)")
            return
        }
        self.init(ErrorCode(error), error.description)
        if case .preconditionFailed(_, _, _, let actual) = error { currentETag = actual }
    }

    /// The error as a response (JSON body).
    func response(close: Bool = false) -> Response {
        var response = Response(status: status, json: ErrorBody.encode(code: code, message: message))
        if let currentETag { response.header(.etag, MetadataHeaders.etagValue(currentETag)) }
        response.closeConnection = close
        return response
    }
}
