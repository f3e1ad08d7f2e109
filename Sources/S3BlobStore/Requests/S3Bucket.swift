/// A bucket at an endpoint, and how requests name it: the source of every request the backend
/// sends (see the `S3Bucket+*.swift` extensions), as plain ``S3Request`` values to sign and send.
package struct S3Bucket: Sendable, Hashable {
    /// Where the bucket lives.
    package var endpoint: S3Endpoint
    /// The bucket's name.
    package var name: String
    /// Path style (`/BUCKET/KEY`) or virtual-hosted style (`BUCKET.host`, `/KEY`).
    package var addressingStyle: S3AddressingStyle

    /// A bucket.
    package init(endpoint: S3Endpoint, name: String, addressingStyle: S3AddressingStyle) {
        self.endpoint = endpoint
        self.name = name
        self.addressingStyle = addressingStyle
    }

    /// The bucket named `name` as `configuration` addresses it.
    package init(configuration: S3Configuration, name: String) {
        self.init(endpoint: configuration.endpoint, name: name, addressingStyle: configuration.addressingStyle)
    }

    /// The `Host` header's value.
    package var host: String {
        switch addressingStyle {
        case .path: endpoint.hostHeader
        case .virtualHosted: "\(name).\(endpoint.hostHeader)"
        }
    }

    /// The decoded path of the bucket itself (listings, multipart listings).
    package var bucketPath: String {
        switch addressingStyle {
        case .path: "/\(name)"
        case .virtualHosted: "/"
        }
    }

    /// The decoded path of `key`, kept byte for byte: a key `a//b` or `/x` is not normalised.
    package func path(forKey key: String) -> String {
        switch addressingStyle {
        case .path: "/\(name)/\(key)"
        case .virtualHosted: "/\(key)"
        }
    }

    /// Where an error happened, for ``S3Error``.
    package func context(_ operation: String, key: String? = nil) -> S3ErrorContext {
        S3ErrorContext(endpoint: endpoint.description, bucket: name, key: key, operation: operation)
    }

    /// The longest key S3 accepts, in UTF-8 bytes.
    package static let maximumKeyByteCount = 1024

    /// Checks a key before it is put in a path: 1...1024 UTF-8 bytes.
    func validate(key: String, _ operation: String) throws(S3RequestError) {
        let count = key.utf8.count
        guard count > 0, count <= Self.maximumKeyByteCount else {
            throw .invalidKey(key: key, reason: count == 0 ? "a key cannot be empty" : "a key is at most \(Self.maximumKeyByteCount) UTF-8 bytes, this one is \(count)", operation: operation)
        }
    }

    /// A request with `Host` first.
    func request(_ method: String, path: String, query: [S3QueryItem] = [], headers: [S3HeaderField] = [], payload: PayloadHash = .emptyBody) -> S3Request {
        S3Request(method: method, path: path, queryItems: query, headers: [S3HeaderField("Host", host)] + headers, payload: payload)
    }
}
