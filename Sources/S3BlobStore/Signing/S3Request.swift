/// One header field of a request to sign: a name and a value, as they will be sent.
package struct S3HeaderField: Sendable, Hashable {
    /// The field name, any case (signing lowercases it).
    package var name: String
    /// The field value, as sent (signing trims it and collapses runs of spaces).
    package var value: String

    /// A field.
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One query parameter, decoded: signing and ``S3Request/target`` encode it once.
package struct S3QueryItem: Sendable, Hashable {
    /// The decoded name.
    package var name: String
    /// The decoded value; empty for a bare subresource such as `uploads`.
    package var value: String

    /// A parameter.
    package init(_ name: String, _ value: String = "") {
        self.name = name
        self.value = value
    }
}

/// How the payload enters the signature (`x-amz-content-sha256`).
package enum PayloadHash: Sendable, Hashable {
    /// The hex SHA-256 of the body: the gateway checks it and refuses a body that does not match.
    case sha256(SHA256Digest)
    /// `UNSIGNED-PAYLOAD`: the body is not covered by the signature (it streams without a first pass).
    case unsigned

    /// The digest of an empty body, which GET, HEAD and DELETE send.
    package static let emptyBody = PayloadHash.sha256(SHA256.hash(""))

    /// The value written into the canonical request and the `x-amz-content-sha256` header.
    package var headerValue: String {
        switch self {
        case .sha256(let digest): digest.hex
        case .unsigned: "UNSIGNED-PAYLOAD"
        }
    }
}

/// A request described as plain values, before signing: what Signature V4 covers and what the
/// transport sends. Building one does no I/O, so every part of a signature is testable.
package struct S3Request: Sendable, Hashable {
    /// The method token (`GET`, `PUT`, ...).
    package var method: String
    /// The decoded absolute path (`/bucket/key` in path style, `/key` in virtual-host style).
    /// It is percent-encoded exactly once and never normalised: S3 keys may hold `//`, `..` and `%`.
    package var path: String
    /// The query parameters, decoded, in any order (signing sorts them).
    package var queryItems: [S3QueryItem]
    /// The header fields to sign, `Host` among them. Fields the transport adds on its own
    /// (`Content-Length`, `Connection`) may stay out: they are sent but not signed. Not
    /// `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` or `Authorization`: signing
    /// adds those (``SignatureV4/Signed/headersToAdd``).
    package var headers: [S3HeaderField]
    /// The payload's hash or `UNSIGNED-PAYLOAD`.
    package var payload: PayloadHash

    /// A request.
    package init(
        method: String, path: String, queryItems: [S3QueryItem] = [], headers: [S3HeaderField] = [],
        payload: PayloadHash = .emptyBody
    ) {
        self.method = method
        self.path = path
        self.queryItems = queryItems
        self.headers = headers
        self.payload = payload
    }

    /// The value of the first header named `name` (any case), if any.
    package func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// The request target for the request line: the path encoded as it is signed, then the query
    /// in its canonical order. A parameter with an empty value is sent bare (`?uploads`), as the
    /// AWS SDKs send subresources; it is signed as `uploads=`, which is the same parameter.
    package var target: String {
        var target = S3URIEncoding.encodePath(path)
        if !queryItems.isEmpty {
            target += "?"
            target += CanonicalRequest.sortedEncodedQuery(queryItems).map { name, value in
                value.isEmpty ? name : name + "=" + value
            }.joined(separator: "&")
        }
        return target
    }
}
