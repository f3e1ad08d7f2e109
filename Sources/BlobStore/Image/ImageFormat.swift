/// An image encoding that ``ImageHeaderParser`` recognises from a blob's leading bytes.
///
/// The raw values are stable identifiers: they are persisted in blob metadata, so renaming a case is a format change.
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// Portable Network Graphics.
    case png
    /// JPEG/JFIF/EXIF, any SOF process (baseline, progressive, lossless, arithmetic).
    case jpeg
    /// GIF87a or GIF89a.
    case gif
    /// WebP in any of its RIFF layouts (lossy VP8, lossless VP8L, extended VP8X).
    case webp
    /// Windows or OS/2 bitmap.
    case bmp
    /// TIFF or BigTIFF, either byte order.
    case tiff
    /// HEIF with HEVC-coded images.
    case heic
    /// HEIF with AV1-coded images.
    case avif

    /// The IANA media type, used as a blob's content type when the client gives none.
    public var mimeType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .bmp: "image/bmp"
        case .tiff: "image/tiff"
        case .heic: "image/heic"
        case .avif: "image/avif"
        }
    }
}
