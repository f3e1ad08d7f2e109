import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder with a short path under `/tmp` (a Unix socket's path is at most 107 bytes, and
/// sockets go inside), removed when the last reference is dropped or by ``cleanUp()``.
package final class TempFolder: @unchecked Sendable {
    /// The folder's path, e.g. `/tmp/bsd-Ab12Cd`.
    package let path: String

    /// Creates the folder (`mkdtemp`, so no two tests share one).
    package init() {
        var template = Array("/tmp/bsd-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { buffer in
            guard let made = mkdtemp(buffer.baseAddress!) else { fatalError("mkdtemp in /tmp failed: errno \(errno)") }
            return String(cString: made)
        }
    }

    /// The folder as a file URL.
    package var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// A path inside the folder.
    package func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Names of the entries in the folder, sorted.
    package func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

    /// Removes the folder and everything in it now (it is gone anyway once the value is dropped).
    package func cleanUp() { try? FileManager.default.removeItem(atPath: path) }

    deinit { cleanUp() }
}

/// A root folder under the system temp folder that does not exist yet (a store creates it on first
/// open), removed when the value is dropped.
package final class TemporaryRoot: @unchecked Sendable {
    /// The root's location.
    package let url: URL
    /// The root's path.
    package var path: String { url.path }

    /// Picks a fresh name; creates nothing.
    package init() {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("blobstore-tests-" + UUID().uuidString, isDirectory: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Every regular file under the root, as paths relative to it.
    package func allFiles() -> [String] {
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

/// Files in a folder (none when it is missing).
package func folderEntries(_ path: String) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
}
