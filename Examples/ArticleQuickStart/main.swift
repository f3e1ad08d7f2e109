// The README's article snippet, compiled and run by CI: everything after this header is the
// README's code block, character for character (DocExampleTests compares them).
//
//   swift run article-quick-start    # any number of times, with or without blobd running

import BlobClient
import BlobStore
import Dispatch
import Foundation

let persistentStore = try BlobStores.open("quick-start")   // here, or through blobd if blobd has it open
let imageData = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR42mP4z8AAQQxwFgBB0gX7b/EWxwAAAABJRU5ErkJggg==")!
persistentStore.storeImage(imageData, identifier: "cat") { result in print(result) }
// No need to wait for the handler: this load runs after the store and sees the image.
persistentStore.loadImage(forIdentifier: "cat") { image in
    if let image { print(image.info.format, image.info.width, image.info.height) }   // png 3 2
    exit(image == nil ? 1 : 0)
}
dispatchMain()   // the handlers run on the main queue, which a command-line program must run
