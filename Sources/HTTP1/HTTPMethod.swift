/// A request method.
///
/// Methods are case-sensitive (RFC 9110 §9.1): `get` is not `GET`, it is `.other("get")`.
package enum HTTPMethod: Sendable, Hashable {
    /// `GET`
    case get
    /// `HEAD`
    case head
    /// `PUT`
    case put
    /// `POST`
    case post
    /// `DELETE`
    case delete
    /// `OPTIONS`
    case options
    /// Any other valid method token, spelled as received.
    case other(String)

    /// Creates a method from its token, or returns `nil` if `token` is empty or not a valid token.
    package init?(_ token: String) {
        var token = token
        let method: HTTPMethod? = token.withUTF8 { utf8 in
            guard !utf8.isEmpty, utf8.allSatisfy(isTokenByte) else { return nil }
            return HTTPMethod(validToken: UnsafeRawBufferPointer(utf8))
        }
        guard let method else { return nil }
        self = method
    }

    /// Classifies bytes already known to be a non-empty token.
    init(validToken token: UnsafeRawBufferPointer) {
        let base = token.baseAddress!.assumingMemoryBound(to: UInt8.self)
        switch token.count {
        case 3:
            if base[0] == 0x47, base[1] == 0x45, base[2] == 0x54 { self = .get; return }  // GET
            if base[0] == 0x50, base[1] == 0x55, base[2] == 0x54 { self = .put; return }  // PUT
        case 4:
            if base[0] == 0x48, base[1] == 0x45, base[2] == 0x41, base[3] == 0x44 { self = .head; return }
            if base[0] == 0x50, base[1] == 0x4F, base[2] == 0x53, base[3] == 0x54 { self = .post; return }
        case 6:
            if matches(base, "DELETE") { self = .delete; return }
        case 7:
            if matches(base, "OPTIONS") { self = .options; return }
        default:
            break
        }
        self = .other(String(decoding: token, as: UTF8.self))
    }

    /// The method token as sent on the wire.
    package var token: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .put: "PUT"
        case .post: "POST"
        case .delete: "DELETE"
        case .options: "OPTIONS"
        case .other(let token): token
        }
    }

    /// Appends the method token to `buffer` without creating a `String` for the known methods.
    func appendToken(into buffer: inout [UInt8]) {
        switch self {
        case .get: buffer.append(staticString: "GET")
        case .head: buffer.append(staticString: "HEAD")
        case .put: buffer.append(staticString: "PUT")
        case .post: buffer.append(staticString: "POST")
        case .delete: buffer.append(staticString: "DELETE")
        case .options: buffer.append(staticString: "OPTIONS")
        case .other(let token): buffer.append(contentsOf: token.utf8)
        }
    }
}

/// Case-sensitive comparison of a buffer with a constant of the same length.
@inline(__always)
private func matches(_ bytes: UnsafePointer<UInt8>, _ constant: StaticString) -> Bool {
    let expected = constant.utf8Start
    for index in 0..<constant.utf8CodeUnitCount where bytes[index] != expected[index] {
        return false
    }
    return true
}
