import BlobStore
import Foundation
import Testing

@Suite("StoredImage (loadImage's value)")
struct StoredImageTests {
    @Test("a whole image is recognised with its size; the same image cut short, or with a bad CRC, is not")
    func validatesWhole() throws {
        let png = minimalPNG(width: 5, height: 4)
        let image = try #require(StoredImage(data: png))
        #expect(image.info == ImageInfo(format: .png, width: 5, height: 4))
        // A header-only prefix (signature and IHDR) was enough before images were validated whole.
        #expect(StoredImage(data: png.prefix(33)) == nil)
        #expect(StoredImage(data: png.dropLast(1)) == nil)
        var damaged = png
        damaged[29] ^= 0xFF   // inside IHDR's CRC
        #expect(StoredImage(data: damaged) == nil)
    }
}
