import Foundation

/// What a store knows about one stored blob version.
public struct BlobMetadata: Hashable, Sendable, Codable {
    /// The blob's identifier.
    public var identifier: String
    /// Content length in bytes.
    public var size: Int64
    /// MIME type; `application/octet-stream` when none was given and the bytes are not a recognised image.
    public var contentType: String
    /// Checksum-derived entity tag of the content.
    public var etag: ETag
    /// When the identifier was first stored (kept across overwrites; reset by a remove).
    public var created: Date
    /// When this version was stored.
    public var modified: Date
    /// Small user-defined string pairs stored with the blob.
    public var userMetadata: [String: String]
    /// Format and pixel size, when the content is a recognised image.
    public var image: ImageInfo?
    /// When this version expires (``BlobExpiry``); `nil` when never.
    public var expires: Date?

    /// Creates metadata; stores and clients do this, applications read it.
    public init(
        identifier: String, size: Int64, contentType: String, etag: ETag, created: Date, modified: Date,
        userMetadata: [String: String] = [:], image: ImageInfo? = nil, expires: Date? = nil
    ) {
        self.identifier = identifier
        self.size = size
        self.contentType = contentType
        self.etag = etag
        self.created = created
        self.modified = modified
        self.userMetadata = userMetadata
        self.image = image
        self.expires = expires
    }
}
