import BlobFuzzTargets
import Foundation
import Testing

/// Every input in `Corpus/<target>/` — the seeds `.ci/fuzz` starts from, and every input a fuzzer
/// run ever found failing — goes through the same checks as under libFuzzer, so a fixed bug stays fixed.
struct CorpusReplayTests {
    static func corpus(_ target: FuzzTarget) throws -> [URL] {
        let folder = try #require(Bundle.module.url(forResource: "Corpus", withExtension: nil)).appendingPathComponent(target.rawValue)
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyCorpusInputPasses(target: FuzzTarget) throws {
        let files = try Self.corpus(target)
        #expect(files.count >= 4, "the \(target.rawValue) corpus lost its seeds")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            if let failure = target.check(bytes) { Issue.record("\(target.rawValue)/\(file.lastPathComponent): \(failure)") }
        }
    }

    /// Prefixes of the seeds (truncated requests, bodies, names and images) pass too.
    @Test func seedPrefixesPass() {
        for target in FuzzTarget.allCases {
            guard let files = try? Self.corpus(target) else { continue }
            for file in files.prefix(3) {
                guard let bytes = try? [UInt8](Data(contentsOf: file)) else { continue }
                for length in stride(from: 0, through: bytes.count, by: max(1, bytes.count / 64)) {
                    if let failure = target.check(Array(bytes[..<length])) {
                        Issue.record("\(target.rawValue)/\(file.lastPathComponent) prefix \(length): \(failure)")
                    }
                }
            }
        }
    }
}
