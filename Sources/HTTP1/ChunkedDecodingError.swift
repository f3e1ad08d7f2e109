/// Why a chunked body was rejected. After any of these the connection's framing is lost: close it.
package enum ChunkedDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The chunk size is missing or is not hexadecimal, or is followed by something other than
    /// whitespace, `;` or CR LF. (400)
    case invalidChunkSize
    /// The chunk-size line (size and extensions) is longer than ``ChunkedDecoder/Limits/maxChunkLineLength``. (400)
    case chunkLineTooLong
    /// The chunk size exceeds ``ChunkedDecoder/Limits/maxChunkSize`` (at most `Int64.max`). (413)
    case chunkTooLarge
    /// A chunk extension contains a control byte. (400)
    case invalidChunkExtension
    /// A bare LF, or a CR not followed by LF, in a chunk-size or trailer line. (400)
    case invalidLineEnding
    /// The bytes after a chunk's data are not CR LF: the size lied. (400)
    case missingCRLFAfterData
    /// The trailer section is longer than ``ChunkedDecoder/Limits/maxTrailerSize``. (431)
    case trailersTooLarge
    /// A trailer line contains a control byte or starts with whitespace. (400)
    case invalidTrailer

    /// The status code a server should answer with.
    package var statusCode: Int {
        switch self {
        case .chunkTooLarge: 413
        case .trailersTooLarge: 431
        default: 400
        }
    }

    /// A stable, short, machine-readable name.
    package var code: String {
        switch self {
        case .invalidChunkSize: "bad_chunk_size"
        case .chunkLineTooLong: "chunk_line_too_long"
        case .chunkTooLarge: "chunk_too_large"
        case .invalidChunkExtension: "bad_chunk_extension"
        case .invalidLineEnding: "bad_chunk_line_ending"
        case .missingCRLFAfterData: "missing_chunk_crlf"
        case .trailersTooLarge: "trailers_too_large"
        case .invalidTrailer: "bad_trailer"
        }
    }

    /// The machine code and status.
    package var description: String { "\(code) (\(statusCode))" }
}
