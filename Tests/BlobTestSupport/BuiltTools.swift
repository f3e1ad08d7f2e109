import Foundation
import Testing

/// The package's built executables (`blob`, `blobd`), for tests that run them as processes.
///
/// Looked for, in order: `$BLOB` / `$BLOBD` when set, beside the running test binary (the build
/// folder this test bundle came from: the sanitizer builds too), then `<package>/.build/debug`.
package enum BuiltTool {
    /// The package's root folder (this file is `Tests/BlobTestSupport/BuiltTools.swift`).
    package static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The executable `name`, or nil when it was not built.
    package static func url(_ name: String) -> URL? {
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment[name.uppercased()], !override.isEmpty {
            candidates.append(URL(fileURLWithPath: override))
        }
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        candidates.append(Bundle.main.bundleURL.appendingPathComponent(name))
        candidates.append(packageRoot.appendingPathComponent(".build/debug/" + name))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The `blob` command line tool.
    package static let blob = url("blob")
    /// The `blobd` daemon.
    package static let blobd = url("blobd")

    /// Why a test that needs `name` cannot run.
    package static func skipReason(_ name: String) -> String {
        "\(name) binary not found beside the test bundle or in \(packageRoot.path)/.build/debug; run `swift build` first"
    }
}

/// The built `blobd` (see ``BuiltTool``).
package enum BlobdBinary {
    /// Its location, or nil when it was not built.
    package static var url: URL? { BuiltTool.blobd }
    /// Why a test that needs it cannot run, or nil when it can.
    package static var skipReason: String? { url == nil ? BuiltTool.skipReason("blobd") : nil }
}

/// The built `blob` (see ``BuiltTool``).
package enum BlobBinary {
    /// Its location, or nil when it was not built.
    package static var url: URL? { BuiltTool.blob }
    /// Why a test that needs it cannot run.
    package static var missingReason: Comment { Comment(rawValue: BuiltTool.skipReason("blob")) }
}
