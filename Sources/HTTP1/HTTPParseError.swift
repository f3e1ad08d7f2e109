/// Why a message head was rejected.
///
/// Every case maps to the status a server answers with (``statusCode``) and to a stable short
/// ``code`` for logs, metrics and error bodies. After any of these errors the connection's framing
/// can no longer be trusted: answer, then close.
package enum HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request line (for ``HTTPResponseParser``, the status line) is longer than
    /// ``HTTPHeadLimits/maxStartLineLength``. (414)
    case requestLineTooLong
    /// The whole head is longer than ``HTTPHeadLimits/maxHeadSize``. (431)
    case headTooLarge
    /// There are more field lines than ``HTTPHeadLimits/maxHeaderCount``. (431)
    case tooManyHeaders
    /// The request line is not `method SP target SP version`, or the status line is not
    /// `version SP code [SP reason]`; also an empty line where the start line should be. (400)
    case invalidStartLine
    /// The method is empty or contains bytes outside `tchar`. (400)
    case invalidMethod
    /// The request target is empty. (400)
    case missingTarget
    /// The request target contains a control byte, space, DEL, `#`, or non-ASCII. (400)
    case invalidTarget
    /// The version is not of the form `HTTP/d.d`. (400)
    case invalidVersion
    /// A well-formed version other than 1.0 or 1.1. (505)
    case unsupportedVersion
    /// A line ends in a bare LF, or a CR is not followed by LF. Only CR LF ends a line. (400)
    case invalidLineEnding
    /// A field line starts with whitespace: obsolete line folding, or whitespace before the first field. (400)
    case obsoleteLineFolding
    /// Whitespace between a field name and its colon, a classic request-smuggling vector. (400)
    case whitespaceBeforeColon
    /// A field name is empty, contains a byte outside `tchar`, or has no colon. (400)
    case invalidHeaderName
    /// A field value contains a control byte such as NUL. (400)
    case invalidHeaderValue
    /// `Content-Length` is not a non-negative decimal integer that fits in `Int64`. (400)
    case invalidContentLength
    /// Several `Content-Length` fields disagree. (400)
    case conflictingContentLength
    /// Both `Content-Length` and `Transfer-Encoding`: the framing is ambiguous (request smuggling). (400)
    case contentLengthWithTransferEncoding
    /// `Transfer-Encoding` is empty, applies `chunked` twice or not last, or arrives in HTTP/1.0. (400)
    case invalidTransferEncoding
    /// A transfer coding other than `chunked`, which this codec cannot decode. (501)
    case unsupportedTransferCoding
    /// An HTTP/1.1 request without `Host`. (400)
    case missingHost
    /// More than one `Host` field. (400)
    case duplicateHost
    /// A response status code that is not three digits in 100–599. (502 on a gateway)
    case invalidStatusCode

    /// The status code a server should answer with.
    ///
    /// Response-side errors (``invalidStatusCode``) map to 502, as a gateway would report them.
    package var statusCode: Int {
        switch self {
        case .requestLineTooLong: 414
        case .headTooLarge, .tooManyHeaders: 431
        case .unsupportedTransferCoding: 501
        case .unsupportedVersion: 505
        case .invalidStatusCode: 502
        case .invalidStartLine, .invalidMethod, .missingTarget, .invalidTarget, .invalidVersion,
            .invalidLineEnding, .obsoleteLineFolding, .whitespaceBeforeColon, .invalidHeaderName,
            .invalidHeaderValue, .invalidContentLength, .conflictingContentLength,
            .contentLengthWithTransferEncoding, .invalidTransferEncoding, .missingHost, .duplicateHost:
            400
        }
    }

    /// ``statusCode`` as an ``HTTPStatus``.
    package var status: HTTPStatus { HTTPStatus(code: statusCode) }

    /// A stable, short, machine-readable name, such as `bad_request_line`.
    package var code: String {
        switch self {
        case .requestLineTooLong: "request_line_too_long"
        case .headTooLarge: "head_too_large"
        case .tooManyHeaders: "too_many_headers"
        case .invalidStartLine: "bad_request_line"
        case .invalidMethod: "bad_method"
        case .missingTarget: "missing_target"
        case .invalidTarget: "bad_target"
        case .invalidVersion: "bad_version"
        case .unsupportedVersion: "version_not_supported"
        case .invalidLineEnding: "bad_line_ending"
        case .obsoleteLineFolding: "obsolete_line_folding"
        case .whitespaceBeforeColon: "whitespace_before_colon"
        case .invalidHeaderName: "bad_header_name"
        case .invalidHeaderValue: "bad_header_value"
        case .invalidContentLength: "bad_content_length"
        case .conflictingContentLength: "conflicting_content_length"
        case .contentLengthWithTransferEncoding: "content_length_with_transfer_encoding"
        case .invalidTransferEncoding: "bad_transfer_encoding"
        case .unsupportedTransferCoding: "unsupported_transfer_coding"
        case .missingHost: "missing_host"
        case .duplicateHost: "duplicate_host"
        case .invalidStatusCode: "bad_status_code"
        }
    }

    /// The machine code and status, such as `bad_request_line (400)`.
    package var description: String { "\(code) (\(statusCode))" }
}
