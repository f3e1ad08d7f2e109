// The article's flow ("Creating persistent data store on iOS"), on Linux:
// store an image, load it back, remove it, remove all, with completion handlers.
// As with the article's queue with barrier writes, the calls are made one after another without
// waiting for their handlers: each takes effect in the order it was made.
//
//   swift run article-example [ROOT]
//
// ROOT defaults to a fresh folder under /tmp so the example leaves your real stores alone.
import BlobStore
import Dispatch
import Foundation

/// A 64×48 24-bit BMP with a colour gradient: a real image that needs no encoder library.
func makeBMP(width: Int, height: Int) -> Data {
    let rowBytes = (width * 3 + 3) & ~3
    let pixelBytes = rowBytes * height
    var data = Data()
    func le<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    data.append(contentsOf: Array("BM".utf8))
    le(UInt32(54 + pixelBytes)); le(UInt32(0)); le(UInt32(54))
    le(UInt32(40)); le(Int32(width)); le(Int32(height)); le(UInt16(1)); le(UInt16(24))
    le(UInt32(0)); le(UInt32(pixelBytes)); le(Int32(2835)); le(Int32(2835)); le(UInt32(0)); le(UInt32(0))
    for y in 0..<height {
        for x in 0..<width {
            data.append(contentsOf: [UInt8(x * 255 / width), UInt8(y * 255 / height), 128])
        }
        data.append(contentsOf: [UInt8](repeating: 0, count: rowBytes - width * 3))
    }
    return data
}

let root = CommandLine.arguments.count > 1
    ? URL(fileURLWithPath: CommandLine.arguments[1])
    : URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("blobstore-article-example")
let persistentStore = try PersistentDataStore(name: "images", root: root)
let image = makeBMP(width: 64, height: 48)
let identifier = "my_identifier"

/// Ends the example with a failure.
func fail(_ message: String) -> Never {
    print(message)
    exit(1)
}

persistentStore.storeImage(image, identifier: identifier) { result in
    switch result {
    case .success(let identifier): print("Stored data successfully with identifier \(identifier).")
    case .noData: fail("No data to store.")
    case .failed(let error): fail("Failed storing data with error \(error)")
    }
}
// Made right after the store, without waiting for its handler: runs after it and sees the image.
persistentStore.loadImage(forIdentifier: identifier) { image in
    guard let image else { fail("Failed loading image.") }
    print("Loaded \(image.info.format) image, \(image.info.width)×\(image.info.height) pixels, \(image.data.count) bytes.")
}
persistentStore.storeImage(Data("not an image".utf8), identifier: "broken") { result in
    if case .failed(let error) = result { print("Refused as expected: \(error)") } else { fail("Stored bytes that are no image.") }
}
persistentStore.removeData(forIdentifier: identifier) { removed in
    print("Removed \(identifier): \((try? removed.get()) ?? false)")
}
// Runs after the remove: loads nothing.
persistentStore.loadImage(forIdentifier: identifier) { image in
    if image != nil { fail("Loaded an image that was removed.") }
    print("Loaded nothing after the remove, as expected.")
}
persistentStore.removeAll { error in
    print(error.map { "Remove all failed: \($0)" } ?? "Removed all; store folder: \(persistentStore.folderURL.path)")
    exit(error == nil ? 0 : 1)
}
// The article delivers completions on the main queue; a command-line program must then run it.
dispatchMain()
