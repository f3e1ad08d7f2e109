/// Where S3 requests go: a scheme, a host and a port (`http://127.0.0.1:7480`,
/// `https://s3.eu-west-1.amazonaws.com`).
public struct S3Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`.
    public enum Scheme: String, Sendable, Hashable {
        /// Plain HTTP/1.1 over TCP (a Ceph gateway or MinIO on a private network).
        case http
        /// HTTP/1.1 over TLS (AWS S3).
        case https

        /// 80 or 443.
        public var defaultPort: Int { self == .http ? 80 : 443 }
    }

    /// The scheme.
    public var scheme: Scheme
    /// The host name or address, without brackets for IPv6 (`::1`).
    public var host: String
    /// The TCP port.
    public var port: Int

    /// An endpoint from its parts.
    public init(scheme: Scheme, host: String, port: Int? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port ?? scheme.defaultPort
    }

    /// AWS's regional S3 endpoint, `https://s3.REGION.amazonaws.com`.
    public static func aws(region: String) -> S3Endpoint {
        S3Endpoint(scheme: .https, host: "s3.\(region).amazonaws.com")
    }

    /// Parses `http[s]://HOST[:PORT][/]`; `source` names where the text came from, for the error.
    /// A path, query, user name or other scheme is refused: the store addresses buckets itself.
    public init(parsing text: String, source: String) throws(AWSConfigurationError) {
        func invalid(_ reason: String) -> AWSConfigurationError {
            .invalidEndpoint(value: text, source: source, reason: reason)
        }
        let schemeEnd = text.range(of: "://")
        guard let schemeEnd, let scheme = Scheme(rawValue: text[..<schemeEnd.lowerBound].lowercased()) else {
            throw invalid("expected http://HOST[:PORT] or https://HOST[:PORT]")
        }
        var authority = text[schemeEnd.upperBound...]
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.contains(where: { "/?#@ ".contains($0) }) else {
            throw invalid("only a scheme, host and port are allowed (no path, query, user or spaces)")
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("an IPv6 address without its closing ']'") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("no host") }
        var port: Int?
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else { throw invalid("the port must be 1–65535") }
            port = value
        }
        self.init(scheme: scheme, host: host.lowercased(), port: port)
    }

    /// The `Host` header's value: the host (bracketed if IPv6), with the port unless it is the scheme's default.
    public var hostHeader: String {
        let bracketed = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port == scheme.defaultPort ? bracketed : "\(bracketed):\(port)"
    }

    /// `scheme://host[:port]`.
    public var description: String { "\(scheme.rawValue)://\(hostHeader)" }
}

/// How a bucket is named in requests.
public enum S3AddressingStyle: String, Sendable, Hashable {
    /// `http://endpoint/BUCKET/KEY`: what Ceph, MinIO and other custom endpoints expect.
    case path
    /// `https://BUCKET.endpoint/KEY`: AWS's default.
    case virtualHosted = "virtual"
}
