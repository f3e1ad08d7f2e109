// TEMPORARY until the image parser lands; delete.
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case png, jpeg, gif, webp, bmp, tiff, heic, avif
    public var mimeType: String { "image/" + rawValue }
}
public struct ImageInfo: Sendable, Hashable, Codable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    public init(format: ImageFormat, width: Int, height: Int) { self.format = format; self.width = width; self.height = height }
    public var mimeType: String { format.mimeType }
}
public struct ImageParseFailure: Error, Sendable, Hashable { public var reason: String }
public enum ImageHeaderParser {
    public static let recommendedPrefixLength = 256 * 1024
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<ImageInfo, ImageParseFailure> { .failure(.init(reason: "stub")) }
}
