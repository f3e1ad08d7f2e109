import BlobStore
import BlobSystem
import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// An error as the protocol states it: an HTTP status, a stable code, and a sentence.
struct APIError: Error, Sendable {
    /// The response status.
    var status: HTTPStatus
    /// The stable machine-readable code (see PROTOCOL.md, "Errors").
    var code: String
    /// The human-readable message.
    var message: String
    /// For `412`: the current version's ETag (`nil` when the blob is absent), sent as the `ETag` header
    /// so a client can retry its compare-and-swap without another request.
    var currentETag: ETag?

    init(_ status: HTTPStatus, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// Maps any error a store call throws; unknown errors become `500 internal_error`.
    init(_ error: any Error) {
        guard let error = error as? BlobStoreError else {
            self.init(.internalServerError, "internal_error", "\(error)")
            return
        }
        let message = error.description
        switch error {
        case .notFound: self.init(.notFound, "not_found", message)
        case .invalidIdentifier: self.init(.badRequest, "invalid_identifier", message)
        case .invalidStoreName: self.init(.badRequest, "invalid_store_name", message)
        case .preconditionFailed(_, _, _, let actual):
            self.init(.preconditionFailed, "precondition_failed", message)
            currentETag = actual
        case .notAnImage: self.init(.unsupportedMediaType, "not_an_image", message)
        case .invalidRecord: self.init(422, "invalid_record", message)
        case .invalidMetadata: self.init(.badRequest, "invalid_metadata", message)
        case .tooLarge: self.init(.contentTooLarge, "too_large", message)
        case .invalidQuery: self.init(.badRequest, "invalid_query", message)
        case .rangeNotSatisfiable: self.init(.rangeNotSatisfiable, "range_not_satisfiable", message)
        case .io(_, _, let errno) where errno.rawValue == ENOSPC || errno.rawValue == EDQUOT:
            self.init(.insufficientStorage, "insufficient_storage", message)
        case .io: self.init(.internalServerError, "io_error", message)
        case .storeLocked: self.init(.serviceUnavailable, "store_locked", message)
        case .corrupt: self.init(.internalServerError, "corrupt", message)
        case .unsupportedFormat: self.init(.internalServerError, "unsupported_format", message)
        }
    }

    /// The error as a response (JSON body).
    func response(close: Bool = false) -> Response {
        var response = Response(status: status, json: JSONWriter.error(code: code, message: message))
        if let currentETag { response.header(.etag, "\"\(currentETag.rawValue)\"") }
        response.closeConnection = close
        return response
    }
}
