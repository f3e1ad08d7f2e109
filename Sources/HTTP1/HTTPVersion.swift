/// The HTTP versions this codec speaks: 1.0 and 1.1.
///
/// Any other version in a request is rejected with ``HTTPParseError/unsupportedVersion`` (505),
/// including `HTTP/1.2`, which RFC 9110 would allow to be treated as 1.1: the daemon's clients are
/// known, and refusing is simpler to reason about than guessing.
package enum HTTPVersion: Sendable, Hashable {
    /// `HTTP/1.0`: connections close after each message unless the peer asks for keep-alive.
    case http1_0
    /// `HTTP/1.1`: connections persist unless either side sends `Connection: close`.
    case http1_1

    /// The version as written on the wire, for example `HTTP/1.1`.
    package var description: String {
        switch self {
        case .http1_0: "HTTP/1.0"
        case .http1_1: "HTTP/1.1"
        }
    }

    /// Appends `HTTP/1.x` to `buffer`.
    func append(into buffer: inout [UInt8]) {
        buffer.append(staticString: self == .http1_1 ? "HTTP/1.1" : "HTTP/1.0")
    }

    /// Reads the eight bytes of an HTTP-version at `bytes`.
    ///
    /// - Returns: the version, or an error saying whether the bytes were not a version at all (400)
    ///   or a well-formed version this codec does not speak (505).
    static func parse(_ bytes: UnsafePointer<UInt8>, count: Int) -> Result<HTTPVersion, HTTPParseError> {
        // "HTTP/" DIGIT "." DIGIT, case-sensitive (RFC 9112 §2.3).
        guard count == 8,
            bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50, bytes[4] == ASCII.slash,
            bytes[5] >= ASCII.zero, bytes[5] <= ASCII.nine, bytes[6] == 0x2E,
            bytes[7] >= ASCII.zero, bytes[7] <= ASCII.nine
        else { return .failure(.invalidVersion) }
        guard bytes[5] == 0x31 else { return .failure(.unsupportedVersion) }
        switch bytes[7] {
        case 0x30: return .success(.http1_0)
        case 0x31: return .success(.http1_1)
        default: return .failure(.unsupportedVersion)
        }
    }
}
