import Foundation
import Testing

import BlobStore

#if canImport(Glibc)
import Glibc
#endif

/// The libraries' public API (`BlobStore`, `BlobClient`) shows no type of the package's internal
/// modules (`BlobSystem`, `CBlobShim`).
///
/// The compiler enforces it as long as those modules are imported below `public`: a public
/// declaration that mentions one of their types then does not compile. This suite keeps the imports so.
@Suite struct PublicAPITests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let importKinds: Set<String> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]

    /// Each `import` of an internal module in `folder`, with its file, as written.
    static func imports(under folder: String) throws -> [(file: String, line: String)] {
        let base = packageRoot.appendingPathComponent(folder).path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var found: [(String, String)] = []
        for case let file as String in walker where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: base + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                let words = line.split(separator: " ")
                guard words.first?.hasPrefix("//") == false else { continue }
                guard let at = words.firstIndex(of: "import"), at + 1 < words.count else { continue }
                // `import BlobSystem`, or a scoped `import struct BlobSystem.Errno`.
                var path = words[at + 1]
                if Self.importKinds.contains(String(path)), at + 2 < words.count { path = words[at + 2] }
                guard let module = path.split(separator: ".").first, ["BlobSystem", "CBlobShim"].contains(String(module)) else { continue }
                found.append((folder + "/" + file, String(line)))
            }
        }
        return found
    }

    @Test(arguments: ["Sources/BlobStore", "Sources/BlobClient"])
    func internalModulesAreImportedBelowPublic(folder: String) throws {
        let found = try Self.imports(under: folder)
        #expect(!found.isEmpty, "no import of BlobSystem found under \(folder): is the package root \(Self.packageRoot.path)?")
        for (file, line) in found {
            let words = line.split(separator: " ").map(String.init)
            let at = words.firstIndex(of: "import") ?? 0
            let access = at > 0 ? words[at - 1] : ""
            #expect(["package", "internal", "fileprivate", "private"].contains(access) && !words[..<at].contains("@_exported"),
                    "\(file): `\(line)` would let public declarations show BlobSystem types; write `package import` or `internal import`")
        }
    }

    @Test func anIOErrorNamesItsErrnoWithoutBlobSystem() {
        let error = BlobStoreError.io(operation: "read", path: "/srv/blobs/a", errno: ErrorNumber(rawValue: EIO))
        guard case .io(_, _, let errno) = error else { Issue.record("not an I/O error"); return }
        #expect(errno.rawValue == EIO)
        #expect(errno.name == "EIO")
        #expect(errno.message == String(cString: strerror(EIO)))
        #expect(error.description == "read failed for /srv/blobs/a: EIO (\(String(cString: strerror(EIO))))")
        #expect(ErrorNumber(rawValue: 4095).name == nil)
        #expect(ErrorNumber(rawValue: 4095).description.hasPrefix("errno 4095 ("))
    }
}
