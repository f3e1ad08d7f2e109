import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct OpenFileLimitTests {
    /// Started with a low soft limit (as many shells set 1024), blobd takes the hard limit so that
    /// thousands of clients are not refused for want of descriptors.
    @Test func daemonRaisesItsSoftOpenFileLimitToTheHardLimit() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_max > 256 else { return }
        let folder = TempFolder()
        let socket = folder.path + "/run/blobd.sock"
        let logPath = folder.path + "/log"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -Sn 256 && exec \"$0\" --root \"$1\" --socket \"$2\"", BlobdBinary.url!.path, folder.path + "/root", socket]
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        #expect(log.contains("open file limit raised from 256 to \(limit.rlim_max)"), "\(log)")
    }
}
