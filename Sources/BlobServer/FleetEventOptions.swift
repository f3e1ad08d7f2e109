/// How a blobd serving an S3 backend hears about the other fleet members' changes
/// (docs/SCALE-OUT.md, "Fleet"): `--events-listen`, `--events-endpoint`, `--events-member`.
package struct FleetEventOptions: Sendable, Hashable {
    /// Whether to listen at all: off unless `--events-listen` gives an address. Off, only this
    /// daemon's own changes reach its subscribers; on, the gateway pays for an event per change
    /// under the prefix (docs/SCALE-OUT.md, "What the notifications cost"), and AWS S3, which cannot
    /// push to HTTP, refuses the subscription.
    package var isEnabled: Bool
    /// The address the receiver binds (default `127.0.0.1`).
    package var listenHost: String
    /// Its port (default 0: one the kernel picks).
    package var listenPort: UInt16
    /// The URL the gateway POSTs to; `nil`: `http://HOST:PORT` from the bound address.
    package var endpoint: String?
    /// This member's name, unique in the fleet; `nil`: from the host name and the socket path.
    package var member: String?

    /// The defaults: off; when turned on without more, an ephemeral loopback port, told to the gateway.
    package init(isEnabled: Bool = false, listenHost: String = "127.0.0.1", listenPort: UInt16 = 0, endpoint: String? = nil, member: String? = nil) {
        self.isEnabled = isEnabled
        self.listenHost = listenHost
        self.listenPort = listenPort
        self.endpoint = endpoint
        self.member = member
    }

    /// The flags and their environment variables, for ``DaemonCommandLine/environmentVariables``.
    package static let environmentVariables: [(flag: String, variable: String)] = [
        ("--events-listen", "BLOBD_EVENTS_LISTEN"), ("--events-endpoint", "BLOBD_EVENTS_ENDPOINT"), ("--events-member", "BLOBD_EVENTS_MEMBER"),
    ]

    /// The flags' lines of `blobd --help`.
    package static let usage = """
          --events-listen ADDR
                              with s3://: join a fleet's change events by listening for the
                              gateway's bucket notifications on [HOST:]PORT (PORT alone: on
                              127.0.0.1; 0: a free port), or off (the default);
                              env BLOBD_EVENTS_LISTEN
          --events-endpoint URL
                              with s3://: the URL the gateway POSTs notifications to (default
                              http://HOST:PORT of --events-listen); env BLOBD_EVENTS_ENDPOINT
          --events-member NAME
                              with s3://: this daemon's name in the fleet, unique per bucket
                              (default from the host name and the socket path); env BLOBD_EVENTS_MEMBER
        """

    /// Sets what `flag` (one of ``environmentVariables``) sets from `value`; returns what is wrong
    /// with the value, phrased to follow the flag's or the variable's name.
    package mutating func apply(_ flag: String, _ value: String?) -> String? {
        switch flag {
        case "--events-listen":
            guard let text = value, let listen = Self.parseListen(text) else { return "must be off, PORT or HOST:PORT" }
            (isEnabled, listenHost, listenPort) = listen
        case "--events-endpoint":
            guard let text = value, Self.isValidEndpoint(text) else { return "must be an http:// or https:// URL" }
            endpoint = text
        case "--events-member":
            guard let text = value, !text.isEmpty, text.utf8.count <= 200, Self.topicSafe(text) == text else {
                return "must be 1 to 200 of A-Z, a-z, 0-9, '-' and '_'"
            }
            member = text
        default:
            return "is not a setting"
        }
        return nil
    }

    /// Reads `--events-listen`'s value: `off`, `PORT`, `HOST:PORT` or `[IPv6]:PORT`; `nil` when malformed.
    package static func parseListen(_ text: String) -> (enabled: Bool, host: String, port: UInt16)? {
        if text == "off" { return (false, "127.0.0.1", 0) }
        if let port = UInt16(text) { return (true, "127.0.0.1", port) }
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        return (true, host, port)
    }

    /// Checks `--events-endpoint`'s value: an `http://` URL (the gateway pushes over plain HTTP or HTTPS).
    package static func isValidEndpoint(_ text: String) -> Bool {
        (text.hasPrefix("http://") || text.hasPrefix("https://")) && text.count > "https://".count
            && !text.contains(where: { $0 == " " || $0.isNewline })
    }

    /// Makes a member name a topic name: letters, digits, `-` and `_` kept, anything else becomes `_`.
    package static func topicSafe(_ text: String) -> String {
        String(text.unicodeScalars.map { scalar -> Character in
            let value = scalar.value
            let keep = (0x30...0x39).contains(value) || (0x41...0x5a).contains(value) || (0x61...0x7a).contains(value) || value == 0x2d || value == 0x5f
            return keep ? Character(scalar) : "_"
        })
    }
}
