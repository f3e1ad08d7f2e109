/// What the store records about an image blob: its format and pixel size as declared by its header.
///
/// The store records it only for a blob whose whole container ``ImageValidator`` accepts; nothing decodes
/// pixel data, so a well-formed file whose compressed pixels are damaged still yields an `ImageInfo`.
public struct ImageInfo: Sendable, Hashable, Codable {
    /// The encoding recognised from the signature.
    public var format: ImageFormat
    /// Width in pixels; always at least 1 when produced by ``ImageHeaderParser``.
    public var width: Int
    /// Height in pixels; always at least 1 when produced by ``ImageHeaderParser``.
    public var height: Int

    /// Creates a record; callers decoding stored metadata use this without re-parsing the image.
    public init(format: ImageFormat, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// The media type of ``format``, so callers holding only an `ImageInfo` need not reach for the format.
    public var mimeType: String { format.mimeType }
}
