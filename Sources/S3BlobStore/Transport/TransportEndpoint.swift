/// Where the transport connects: a host and a port, spoken to in plain HTTP/1.1.
///
/// The pool keeps connections per endpoint, and every transport error names one.
package struct TransportEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// A name, `localhost`, or an IPv4 or IPv6 literal (without brackets).
    package var host: String
    /// The TCP port.
    package var port: UInt16

    /// Creates an endpoint; brackets around an IPv6 literal are dropped.
    package init(host: String, port: UInt16) {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = port
    }

    /// Parses `http://host[:port][/…]` (port 80 when absent); `nil` for another scheme or no host.
    /// HTTPS is not spoken by this transport.
    package init?(url: String) {
        guard url.lowercased().hasPrefix("http://") else { return nil }
        var rest = Substring(url.dropFirst("http://".count))
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<slash] }
        if rest.contains("@") { return nil }
        var host = rest
        var port: UInt16 = 80
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let parsed = UInt16(after.dropFirst()) else { return nil }
                port = parsed
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let parsed = UInt16(rest[rest.index(after: colon)...]) else { return nil }
            host = rest[..<colon]
            port = parsed
        }
        guard !host.isEmpty else { return nil }
        self.init(host: String(host), port: port)
    }

    /// The `Host` field's value: `host:port`, the port left out when it is 80, IPv6 in brackets.
    package var hostField: String {
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }

    /// `host:port` (IPv6 in brackets), as errors name it.
    package var description: String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
