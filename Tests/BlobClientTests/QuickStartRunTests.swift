import BlobClient
import BlobStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The README's library quick start and article snippet (`Examples/QuickStart`,
/// `Examples/ArticleQuickStart`; DocExampleTests keeps them equal to the README) run as a reader
/// runs them, on the default root of a temp `XDG_DATA_HOME`: twice in a row each, without blobd and
/// with blobd serving that root on the default socket and holding their store, and each run ends
/// by itself.
@Suite("The README's quick starts run with and without blobd")
struct QuickStartRunTests {
    typealias Run = Machine.Run

    static let quickStart = BuiltTool.url("quick-start")
    static let articleQuickStart = BuiltTool.url("article-quick-start")
    static let built = quickStart != nil && articleQuickStart != nil && BlobdBinary.url != nil

    /// A reader's machine in a temp folder: `XDG_DATA_HOME`, `XDG_RUNTIME_DIR` and `TMPDIR` under it.
    struct Machine {
        let folder = TempFolder()
        var root: String { folder.path + "/data/blobstore" }
        var socket: String { folder.path + "/run/blobstore/blobd.sock" }

        init() throws {
            for name in ["data", "run", "tmp"] {
                try FileManager.default.createDirectory(
                    atPath: folder.path + "/" + name, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        }

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["BLOB_SOCKET"] = nil
            environment["XDG_DATA_HOME"] = folder.path + "/data"
            environment["XDG_RUNTIME_DIR"] = folder.path + "/run"
            environment["TMPDIR"] = folder.path + "/tmp"
            // In an address-sanitized test run the examples are sanitized too. Their leak report at
            // exit (Foundation buffers their top-level code still holds when `exit` runs) would land in
            // the output these tests read; the library's leaks are checked in the test process itself.
            environment["ASAN_OPTIONS"] = (environment["ASAN_OPTIONS"].map { $0 + ":" } ?? "") + "detect_leaks=0"
            return environment
        }

        /// blobd on this machine's default root and socket, as `swift run blobd` starts it.
        func startBlobd() throws -> DaemonProcess {
            try DaemonProcess(folder: folder, root: root, socket: socket, logLevel: "error")
        }

        /// What one run of a program did.
        struct Run: Sendable {
            var program: String
            var round: Int
            var status: Int32
            var output: String
            var ended: Bool
        }

        /// Runs `program` to its end (killed, and reported as not ending, after `seconds`). Blocking.
        func run(_ program: URL, round: Int, seconds: Double = 120) throws -> Run {
            let process = Process()
            process.executableURL = program
            process.environment = environment
            let outputPath = folder.path + "/out-\(UUID().uuidString.prefix(8)).txt"
            _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
            defer { try? output.close() }
            process.standardOutput = output
            process.standardError = output
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            let ended = !process.isRunning
            if !ended {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            return Run(program: program.lastPathComponent, round: round, status: ended ? process.terminationStatus : -1, output: text, ended: ended)
        }

        /// Runs the quick start, then the article snippet, twice each, on a dispatch thread (the
        /// waits must not hold a thread of the Swift concurrency pool).
        func runQuickStarts() async throws -> [Run] {
            let machine = self
            return try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result {
                        try [1, 2].map { try machine.run(quickStart!, round: $0) } + [1, 2].map { try machine.run(articleQuickStart!, round: $0) }
                    })
                }
            }
        }
    }

    /// Each run ended by itself, succeeded, said that it reached its store `how`, and did what the
    /// README says it does.
    static func check(_ runs: [Run], reached how: String) {
        for run in runs {
            let label = "\(run.program) run \(run.round) (\(how))"
            #expect(run.ended, "\(label) did not end; it printed:\n\(run.output)")
            #expect(run.status == 0, "\(label) failed:\n\(run.output)")
            if run.program == "article-quick-start" {
                #expect(run.output == "success(\"cat\")\npng 3 2\n", "\(label): \(run.output)")
                continue
            }
            let lines = run.output.split(separator: "\n").map(String.init)
            #expect(lines.first == how, "\(label): \(run.output)")
            for line in ["hello el", "png 3 2", "Tom", "streamed 3000000 bytes", #"["cats/tom.png"]"#] {
                #expect(lines.contains(line), "\(label) did not print '\(line)': \(run.output)")
            }
            #expect(lines.contains { $0.hasSuffix(" removed video") }, "\(label): \(run.output)")
            #expect(lines.contains { $0.hasSuffix(" put notes/hello.txt 11") }, "\(label): \(run.output)")
            if run.round == 2 {
                #expect(lines.contains("notes/once exists already (this is not the first run)"), "\(label): \(run.output)")
            }
        }
    }

    @Test(.enabled(if: built, "quick-start, article-quick-start or blobd not built (swift build)"))
    func withoutBlobd() async throws {
        let machine = try Machine()
        Self.check(try await machine.runQuickStarts(), reached: "in this process")
    }

    @Test(.enabled(if: built, "quick-start, article-quick-start or blobd not built (swift build)"))
    func withBlobdServingTheDefaultRoot() async throws {
        let machine = try Machine()
        let daemon = try machine.startBlobd()
        defer { daemon.terminate() }
        // blobd runs, but nobody has asked it for the quick start's store: the store opens here.
        Self.check(try await machine.runQuickStarts(), reached: "in this process")
        // Once blobd has been asked for the store it keeps it open: the quick starts go through blobd.
        let served = try BlobClient(socketPath: machine.socket).store("quick-start")
        _ = try await served.list(ListQuery(limit: 1))
        Self.check(try await machine.runQuickStarts(), reached: "through blobd")
        #expect(try await served.get("notes/hello.txt") == Data("hello again".utf8))
    }
}
