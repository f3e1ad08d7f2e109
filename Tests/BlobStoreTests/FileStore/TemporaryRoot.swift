import Foundation

/// A fresh root folder under the system temp folder, removed when the value is dropped.
final class TemporaryRoot: @unchecked Sendable {
    let url: URL
    var path: String { url.path }

    init() {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("blobstore-tests-" + UUID().uuidString, isDirectory: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Every regular file under the root, as paths relative to it.
    func allFiles() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return [] }
        var files: [String] = []
        while let next = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + next, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(next)
            }
        }
        return files
    }
}
