import BlobFuzzTargets
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Two builds of one file. `.ci/fuzz` compiles it with `-DBLOB_FUZZ` and libFuzzer, which brings
// its own `main` and calls `LLVMFuzzerTestOneInput`; the target comes from BLOB_FUZZ_TARGET because
// the command line belongs to libFuzzer. A plain `swift build` gets the replay tool below instead.

/// The target named by `BLOB_FUZZ_TARGET` (read once).
let selectedTarget: FuzzTarget? = getenv("BLOB_FUZZ_TARGET").flatMap { FuzzTarget(rawValue: String(cString: $0)) }

/// libFuzzer's entry point: checks one input and traps on a violated property, so libFuzzer saves it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = selectedTarget else {
        fatalError("set BLOB_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    if let failure = target.check(input) { fatalError("\(target.rawValue): \(failure)") }
    return 0
}

#if !BLOB_FUZZ
/// `blob-fuzz TARGET FILE|FOLDER ...`: runs files (a corpus, a crash input) through a target's
/// checks without libFuzzer. Exit 0 when every property holds, 1 otherwise, 64 for a usage error.
@main
struct ReplayMain {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count >= 2 else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: blob-fuzz \(names) FILE|FOLDER ...\n(fuzzing itself: .ci/fuzz)\n".utf8))
            exit(64)
        }
        var checked = 0
        var failed = 0
        for path in arguments.dropFirst() {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("blob-fuzz: cannot read \(file)\n".utf8))
                    failed += 1
                    continue
                }
                checked += 1
                if let failure = target.check(Array(data)) {
                    print("FAIL \(file): \(failure)")
                    failed += 1
                }
            }
        }
        print("\(target.rawValue): \(checked) inputs checked, \(failed) failed")
        exit(failed == 0 ? 0 : 1)
    }

    /// The regular files at `path`: itself, or those directly in it (sorted).
    static func files(at path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return [path] }
        guard isFolder.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }
    }
}
#endif
