/// The headers stored with an object on PutObject and CreateMultipartUpload.
package struct S3ObjectHeaders: Sendable, Hashable {
    /// `Content-Type`.
    package var contentType: String?
    /// Other standard headers that round-trip (`Cache-Control`, `Content-Disposition`, `Expires`, ...).
    package var standard: [S3HeaderField]
    /// User metadata, sent as `x-amz-meta-NAME`. Names are lowercased (the gateway lowercases them
    /// and turns `_` into `-`); values are sent as they are, so leading and trailing spaces, which
    /// the gateway trims, are the caller's to encode.
    package var metadata: [S3HeaderField]

    /// Object headers.
    package init(contentType: String? = nil, standard: [S3HeaderField] = [], metadata: [S3HeaderField] = []) {
        self.contentType = contentType
        self.standard = standard
        self.metadata = metadata
    }

    /// The header fields, validated.
    func fields(_ operation: String) throws(S3RequestError) -> [S3HeaderField] {
        var fields: [S3HeaderField] = []
        if let contentType {
            try Self.validateValue(contentType, name: "Content-Type", operation)
            fields.append(S3HeaderField("Content-Type", contentType))
        }
        for field in standard {
            try Self.validateName(field.name, operation)
            try Self.validateValue(field.value, name: field.name, operation)
            fields.append(field)
        }
        for field in metadata {
            let name = "x-amz-meta-" + field.name.lowercased()
            guard !field.name.isEmpty else { throw .invalidHeader(name: name, reason: "a metadata name cannot be empty", operation: operation) }
            try Self.validateName(name, operation)
            try Self.validateValue(field.value, name: name, operation)
            fields.append(S3HeaderField(name, field.value))
        }
        return fields
    }

    /// An HTTP token (RFC 9110 §5.6.2).
    static func validateName(_ name: String, _ operation: String) throws(S3RequestError) {
        let valid = !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
        guard valid else { throw .invalidHeader(name: name, reason: "a header name is letters, digits and !#$%&'*+-.^_`|~", operation: operation) }
    }

    /// A field value: any bytes but control characters (tab allowed); raw UTF-8 is kept as is.
    static func validateValue(_ value: String, name: String, _ operation: String) throws(S3RequestError) {
        guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7f || $0 == 0x09 }) else {
            throw .invalidHeader(name: name, reason: "a header value cannot hold control characters (CR, LF, NUL, ...)", operation: operation)
        }
    }
}

/// A precondition S3 checks atomically when it stores an object.
package enum S3WriteCondition: Sendable, Hashable {
    /// `If-None-Match: *`: create only; `412 PreconditionFailed` when the key exists.
    case ifNoneMatchAny
    /// `If-Match: ETAG`: replace only the version with this ETag. Sent unquoted: the Ceph gateway
    /// compares the raw value and always fails the quoted form S3 returns in `ETag:`.
    case ifMatch(etag: String)
    /// `If-Match: *`: replace only an existing object.
    case ifMatchAny

    var field: S3HeaderField {
        switch self {
        case .ifNoneMatchAny: S3HeaderField("If-None-Match", "*")
        case .ifMatch(let etag): S3HeaderField("If-Match", S3XMLValues.unquotedETag(etag))
        case .ifMatchAny: S3HeaderField("If-Match", "*")
        }
    }
}

/// The bytes of a ranged GetObject (`Range: bytes=...`).
package enum S3ByteRange: Sendable, Hashable {
    /// `bytes=FIRST-LAST`, both inclusive.
    case bounded(first: Int64, last: Int64)
    /// `bytes=FIRST-`: from `first` to the end.
    case from(first: Int64)
    /// `bytes=-COUNT`: the last `count` bytes.
    case suffix(count: Int64)

    /// The header value.
    package var headerValue: String {
        switch self {
        case .bounded(let first, let last): "bytes=\(first)-\(last)"
        case .from(let first): "bytes=\(first)-"
        case .suffix(let count): "bytes=-\(count)"
        }
    }

    var isValid: Bool {
        switch self {
        case .bounded(let first, let last): first >= 0 && last >= first
        case .from(let first): first >= 0
        case .suffix(let count): count > 0
        }
    }
}
