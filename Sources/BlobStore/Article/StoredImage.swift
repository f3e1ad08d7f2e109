import Foundation

/// An image as this store knows it on Linux: the encoded bytes plus what their header says
/// (what `loadImage` hands over where the article hands over a `UIImage`).
public struct StoredImage: Sendable, Hashable {
    /// The encoded image.
    public var data: Data
    /// Format and pixel size.
    public var info: ImageInfo

    /// Recognises `data` as an image, or returns `nil`.
    public init?(data: Data) {
        let parsed = data.withUnsafeBytes { ImageHeaderParser.parse($0) }
        guard case .success(let info) = parsed else { return nil }
        self.data = data
        self.info = info
    }
}
