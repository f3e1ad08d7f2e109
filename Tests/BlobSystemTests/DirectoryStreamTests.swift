import BlobSystem
import Foundation
import Testing

/// `DirectoryStream` reads each name in place: copying the whole 256-byte `d_name` field read past
/// the end of the kernel's buffer for its last record (found by AddressSanitizer in the sanitizer
/// test run, which runs this test too).
@Suite struct DirectoryStreamTests {
    @Test func listsEveryNameOfEveryLength() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dirstream-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var names = Set<String>()
        // Many buffers' worth of records whose lengths vary, so some buffer ends just after a short name.
        for index in 0..<3000 {
            let name = String(index) + String(repeating: "n", count: index % 240)
            names.insert(name)
            #expect(FileManager.default.createFile(atPath: folder + "/" + name, contents: nil))
        }
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: false)
        let entries = try DirectoryStream.entries(of: folder)
        #expect(Set(entries.map(\.name)) == names.union(["sub"]))
        #expect(entries.count == names.count + 1)
        #expect(entries.first { $0.name == "sub" }?.kind == .directory)
        #expect(entries.filter { $0.kind == .regular }.count == names.count)
    }
}
