import Foundation

/// A precondition on the current version, checked atomically with the change.
public enum WriteCondition: Hashable, Sendable {
    /// No precondition.
    case none
    /// Create only: fail with ``BlobStoreError/preconditionFailed(store:identifier:expected:actual:)`` if the blob exists.
    case ifNoneMatch
    /// Replace or remove only if the current version's ETag is this one (compare-and-swap).
    case ifMatch(ETag)
}

/// What a put checks about its content before anything is stored.
public enum ContentValidation: String, Hashable, Sendable, Codable {
    /// Store any bytes.
    case none
    /// Refuse content that is not a recognised image: a whole, well-formed container of a known format,
    /// checked by ``ImageValidator`` (``BlobStoreError/notAnImage(store:identifier:reason:)``).
    case image
    /// Refuse content that is not a JSON document (``BlobStoreError/invalidRecord(store:identifier:reason:)``).
    case record
}

/// When a stored blob expires: after that instant it is never served (as if removed), and the store
/// removes it.
public enum BlobExpiry: Hashable, Sendable {
    /// The store's ``StorePolicy/defaultTimeToLive`` after the put commits, or never without one.
    case storeDefault
    /// Never, whatever the store's default.
    case never
    /// At this instant.
    case at(Date)
    /// This long after the put commits.
    case after(Duration)
}

/// How a put stores its content.
public struct PutOptions: Hashable, Sendable {
    /// MIME type to record; `nil` means: the image type if the bytes are a recognised image, else `application/octet-stream`.
    public var contentType: String?
    /// Small string pairs stored with the blob (see ``UserMetadataRules``).
    public var userMetadata: [String: String]
    /// A precondition on the current version.
    public var condition: WriteCondition
    /// A check of the content.
    public var validation: ContentValidation
    /// When the stored version expires.
    public var expiry: BlobExpiry

    /// Creates options; every parameter has the permissive default.
    public init(
        contentType: String? = nil, userMetadata: [String: String] = [:], condition: WriteCondition = .none,
        validation: ContentValidation = .none, expiry: BlobExpiry = .storeDefault
    ) {
        self.contentType = contentType
        self.userMetadata = userMetadata
        self.condition = condition
        self.validation = validation
        self.expiry = expiry
    }
}

/// Limits on user metadata and content types, so they fit in a file header and an HTTP header.
public enum UserMetadataRules {
    /// At most this many pairs.
    public static let maximumCount = 64
    /// Keys: 1–64 characters of `a-z`, `0-9`, `-`, `_`.
    public static let maximumKeyLength = 64
    /// Values: at most this many UTF-8 bytes, no control characters.
    public static let maximumValueByteCount = 1024
    /// All keys and values together: at most this many bytes.
    public static let maximumTotalByteCount = 8192
    /// Content types: 1–255 printable ASCII characters.
    public static let maximumContentTypeLength = 255

    /// Why the options' metadata or content type is unacceptable, or `nil`.
    public static func violation(contentType: String?, userMetadata: [String: String]) -> String? {
        if let type = contentType {
            let bytes = type.utf8
            // Checked in place (every put checks its type, some twice): iterating the UTF-8 view costs
            // many instructions a byte (`Benchmarks/scripts/instructions put` counts a put's).
            let printable = { (byte: UInt8) in byte >= 0x20 && byte < 0x7F }
            let allPrintable = bytes.withContiguousStorageIfAvailable { $0.allSatisfy(printable) } ?? bytes.allSatisfy(printable)
            if bytes.isEmpty || bytes.count > maximumContentTypeLength || !allPrintable {
                return "a content type is 1–\(maximumContentTypeLength) printable ASCII characters"
            }
        }
        if userMetadata.count > maximumCount { return "at most \(maximumCount) user metadata pairs (got \(userMetadata.count))" }
        var total = 0
        for (key, value) in userMetadata.sorted(by: { $0.key < $1.key }) {
            let keyBytes = key.utf8
            if keyBytes.isEmpty || keyBytes.count > maximumKeyLength
                || !keyBytes.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F })
            {
                return "user metadata key '\(key)' must be 1–\(maximumKeyLength) characters of a-z, 0-9, '-', '_'"
            }
            if value.utf8.count > maximumValueByteCount {
                return "user metadata value for '\(key)' is \(value.utf8.count) bytes; the limit is \(maximumValueByteCount)"
            }
            if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) {
                return "user metadata value for '\(key)' contains a control character"
            }
            total += keyBytes.count + value.utf8.count
        }
        if total > maximumTotalByteCount {
            return "user metadata totals \(total) bytes; the limit is \(maximumTotalByteCount)"
        }
        return nil
    }
}
