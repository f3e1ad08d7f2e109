/// A response status code with its standard reason phrase.
///
/// Status codes are integers in 100–599 (RFC 9110 §15). The named constants cover what a blob
/// daemon and its client meet; any other code in range can be made from an integer literal.
package struct HTTPStatus: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The three-digit code.
    package let code: Int

    /// Creates a status; `code` must be in 100–599.
    package init(code: Int) {
        precondition((100...599).contains(code), "HTTP status codes are 100–599, not \(code)")
        self.code = code
    }

    /// Creates a status from an integer literal, such as `let status: HTTPStatus = 418`.
    package init(integerLiteral value: Int) {
        self.init(code: value)
    }

    /// `code` followed by its reason phrase, such as `404 Not Found`.
    package var description: String { "\(code) \(reasonPhrase)" }

    /// 1xx: an interim response; the final response follows on the same connection.
    package var isInformational: Bool { code < 200 }

    /// The standard reason phrase, or an empty string for codes without one.
    package var reasonPhrase: String { standardReasonPhrase.map { "\($0)" } ?? "" }

    /// The standard reason phrase as a constant, so serializing it copies bytes and builds no String.
    package var standardReasonPhrase: StaticString? {
        switch code {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 507: "Insufficient Storage"
        default: nil
        }
    }

    /// `100 Continue`
    package static let `continue`: HTTPStatus = 100
    /// `101 Switching Protocols`
    package static let switchingProtocols: HTTPStatus = 101
    /// `200 OK`
    package static let ok: HTTPStatus = 200
    /// `201 Created`
    package static let created: HTTPStatus = 201
    /// `202 Accepted`
    package static let accepted: HTTPStatus = 202
    /// `204 No Content`
    package static let noContent: HTTPStatus = 204
    /// `206 Partial Content`
    package static let partialContent: HTTPStatus = 206
    /// `301 Moved Permanently`
    package static let movedPermanently: HTTPStatus = 301
    /// `304 Not Modified`
    package static let notModified: HTTPStatus = 304
    /// `400 Bad Request`
    package static let badRequest: HTTPStatus = 400
    /// `401 Unauthorized`
    package static let unauthorized: HTTPStatus = 401
    /// `403 Forbidden`
    package static let forbidden: HTTPStatus = 403
    /// `404 Not Found`
    package static let notFound: HTTPStatus = 404
    /// `405 Method Not Allowed`
    package static let methodNotAllowed: HTTPStatus = 405
    /// `408 Request Timeout`
    package static let requestTimeout: HTTPStatus = 408
    /// `409 Conflict`
    package static let conflict: HTTPStatus = 409
    /// `411 Length Required`
    package static let lengthRequired: HTTPStatus = 411
    /// `412 Precondition Failed`
    package static let preconditionFailed: HTTPStatus = 412
    /// `413 Content Too Large`
    package static let contentTooLarge: HTTPStatus = 413
    /// `414 URI Too Long`
    package static let uriTooLong: HTTPStatus = 414
    /// `415 Unsupported Media Type`
    package static let unsupportedMediaType: HTTPStatus = 415
    /// `416 Range Not Satisfiable`
    package static let rangeNotSatisfiable: HTTPStatus = 416
    /// `417 Expectation Failed`
    package static let expectationFailed: HTTPStatus = 417
    /// `428 Precondition Required`
    package static let preconditionRequired: HTTPStatus = 428
    /// `429 Too Many Requests`
    package static let tooManyRequests: HTTPStatus = 429
    /// `431 Request Header Fields Too Large`
    package static let requestHeaderFieldsTooLarge: HTTPStatus = 431
    /// `500 Internal Server Error`
    package static let internalServerError: HTTPStatus = 500
    /// `501 Not Implemented`
    package static let notImplemented: HTTPStatus = 501
    /// `502 Bad Gateway`
    package static let badGateway: HTTPStatus = 502
    /// `503 Service Unavailable`
    package static let serviceUnavailable: HTTPStatus = 503
    /// `505 HTTP Version Not Supported`
    package static let httpVersionNotSupported: HTTPStatus = 505
    /// `507 Insufficient Storage`
    package static let insufficientStorage: HTTPStatus = 507
}
