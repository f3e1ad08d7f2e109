import HTTP1

/// The stable machine-readable codes of error responses (docs/PROTOCOL.md, "Errors"), each with
/// the status it is sent with.
///
/// `bad_request` is also sent with the HTTP codec's own status for a malformed request (`413`,
/// `414`, `431`, `501`, `505`); every other code has exactly one status.
package enum ErrorCode: String, CaseIterable, Sendable, Hashable {
    /// Malformed HTTP, a bad path escape, `%00` outside `{store}` and `{id}`, a bad header value.
    case badRequest = "bad_request"
    /// The blob identifier breaks a rule of "Identifiers".
    case invalidIdentifier = "invalid_identifier"
    /// The store name breaks `[a-z0-9][a-z0-9._-]{0,62}`.
    case invalidStoreName = "invalid_store_name"
    /// Content type or user metadata out of bounds.
    case invalidMetadata = "invalid_metadata"
    /// List parameters malformed, or the query not valid percent-encoding.
    case invalidQuery = "invalid_query"
    /// A store policy document (`PUT /v1/stores/{store}`) malformed or out of bounds.
    case invalidPolicy = "invalid_policy"
    /// A well-formed store policy that the store's backend cannot keep (limits or a default time
    /// to live on an S3 store).
    case unsupportedPolicy = "unsupported_policy"
    /// The peer's uid/gid is not allowed.
    case forbidden
    /// No such blob, store or path.
    case notFound = "not_found"
    /// The method is not allowed on this path.
    case methodNotAllowed = "method_not_allowed"
    /// `If-Match` / `If-None-Match: *` failed.
    case preconditionFailed = "precondition_failed"
    /// The blob exceeds the store's maximum size.
    case tooLarge = "too_large"
    /// `Blob-Validate: image` and the content is not a recognised image.
    case notAnImage = "not_an_image"
    /// The range does not overlap the blob.
    case rangeNotSatisfiable = "range_not_satisfiable"
    /// `Blob-Validate: record` and the content is not a strict JSON text.
    case invalidRecord = "invalid_record"
    /// A system call failed.
    case ioError = "io_error"
    /// A damaged store file.
    case corrupt
    /// A root or store with a newer layout than this daemon's.
    case unsupportedFormat = "unsupported_format"
    /// Anything unexpected.
    case internalError = "internal_error"
    /// Another process has the store open.
    case storeLocked = "store_locked"
    /// The disk or quota is full.
    case insufficientStorage = "insufficient_storage"
    /// The store's backend (an object store) cannot be reached or failed.
    case backendUnavailable = "backend_unavailable"

    /// The status an error with this code is sent with (for `bad_request` from the codec, the
    /// codec's status instead).
    package var status: HTTPStatus {
        switch self {
        case .badRequest, .invalidIdentifier, .invalidStoreName, .invalidMetadata, .invalidQuery, .invalidPolicy: .badRequest
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .preconditionFailed: .preconditionFailed
        case .tooLarge: .contentTooLarge
        case .notAnImage: .unsupportedMediaType
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .invalidRecord, .unsupportedPolicy: 422
        case .ioError, .corrupt, .unsupportedFormat, .internalError: .internalServerError
        case .storeLocked, .backendUnavailable: .serviceUnavailable
        case .insufficientStorage: 507
        }
    }
}
