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
            return environment
        }

        /// blobd on this machine's default root and socket, as `swift run blobd` starts it.
        func startBlobd() throws -> DaemonProcess {
            try DaemonProcess(folder: folder, root: root, socket: socket, logLevel: "error")
        }

        /// Runs `program` to its end (killed, and reported as not ending, after `seconds`).
        func run(_ program: URL, seconds: Double = 120) throws -> (status: Int32, output: String) {
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
            #expect(ended, "\(program.lastPathComponent) did not end within \(Int(seconds)) s; it printed:\n\(text)")
            return (ended ? process.terminationStatus : -1, text)
        }

        /// Runs the quick start and the article snippet twice each; each must succeed, say that it
        /// reached its store `how`, and do what the README says it does.
        func runQuickStarts(expecting how: String) throws {
            for round in 1...2 {
                let (status, output) = try run(quickStart!)
                #expect(status == 0, "quick-start run \(round) (\(how)) failed:\n\(output)")
                let lines = output.split(separator: "\n").map(String.init)
                #expect(lines.first == how, "quick-start run \(round): \(output)")
                #expect(lines.contains("hello el"), "quick-start run \(round): \(output)")
                #expect(lines.contains("png 3 2"), "quick-start run \(round): \(output)")
                #expect(lines.contains("streamed 3000000 bytes"), "quick-start run \(round): \(output)")
                #expect(lines.contains(#"["cats/tom.png"]"#), "quick-start run \(round): \(output)")
                #expect(lines.contains { $0.hasSuffix(" removed video") }, "quick-start run \(round): \(output)")
                #expect(lines.contains { $0.hasSuffix(" put notes/hello.txt 11") }, "quick-start run \(round): \(output)")
                if round == 2 {
                    #expect(lines.contains("notes/once exists already (this is not the first run)"), "quick-start run 2: \(output)")
                }
            }
            for round in 1...2 {
                let (status, output) = try run(articleQuickStart!)
                #expect(status == 0, "article-quick-start run \(round) (\(how)) failed:\n\(output)")
                #expect(output == "success(\"cat\")\npng 3 2\n", "article-quick-start run \(round) (\(how)): \(output)")
            }
        }
    }

    @Test(.enabled(if: built, "quick-start, article-quick-start or blobd not built (swift build)"))
    func withoutBlobd() throws {
        let machine = try Machine()
        try machine.runQuickStarts(expecting: "in this process")
    }

    @Test(.enabled(if: built, "quick-start, article-quick-start or blobd not built (swift build)"))
    func withBlobdServingTheDefaultRoot() throws {
        let machine = try Machine()
        let daemon = try machine.startBlobd()
        defer { daemon.terminate() }
        // blobd runs, but nobody has asked it for the quick start's store: the store opens here.
        try machine.runQuickStarts(expecting: "in this process")
        // Once blobd has been asked for the store it keeps it open: the quick starts go through blobd.
        let client = try daemon.connect()
        #expect(try client.request("GET", "/v1/stores/quick-start/blobs?limit=1").status == 200)
        try machine.runQuickStarts(expecting: "through blobd")
        #expect(try client.request("GET", "/v1/stores/quick-start/blobs/notes/hello.txt").text == "hello again")
    }
}
