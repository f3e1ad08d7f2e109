import BlobStore
import HTTP1

/// Why a request path names no resource the daemon can act on.
package enum RouteError: Error, Hashable, Sendable {
    /// Not valid percent-encoding (or an encoded NUL outside `{store}` and `{id}`): `400 bad_request`.
    case malformedPath(PercentDecodingError)
    /// Well formed, but no resource has this path: `404 not_found`.
    case unknownPath
    /// `{store}` or `{id}` of `route` breaks its rule: `400 invalid_store_name` or `400 invalid_identifier`
    /// (the route, matched on the path as sent for an encoded NUL, says which operation was refused).
    case invalidName(BlobStoreError, in: Route)

    /// The code of the error response.
    package var code: ErrorCode {
        switch self {
        case .malformedPath: .badRequest
        case .unknownPath: .notFound
        case .invalidName(let error, _): ErrorCode(error)
        }
    }

    /// The error response's message, for a request whose path (still encoded) is `path`.
    package func message(path: String) -> String {
        switch self {
        case .malformedPath(let error): "the request path is not valid percent-encoding: \(error)"
        case .unknownPath: "no such resource: \(path)"
        case .invalidName(let error, _): error.description
        }
    }
}
