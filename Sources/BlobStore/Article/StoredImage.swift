import Foundation

/// An image as this store knows it on Linux: the encoded bytes plus their format and pixel size
/// (what `loadImage` hands over where the article hands over a `UIImage`).
public struct StoredImage: Sendable, Hashable {
    /// The encoded image.
    public var data: Data
    /// Format and pixel size.
    public var info: ImageInfo

    /// Validates `data` whole as an image (as a put with image validation does), or returns `nil`.
    public init?(data: Data) {
        guard case .success(let info) = ImageValidator.validate(data) else { return nil }
        self.data = data
        self.info = info
    }
}
