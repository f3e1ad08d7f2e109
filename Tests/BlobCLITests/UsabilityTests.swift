@testable import BlobCLI
import BlobStore
import Foundation
import Testing

/// Suggestions, addressing shortcuts, content types, removal by prefix, the JSON schema and the version.
@Suite("blob usability")
struct UsabilityTests {
    @Test("a mistyped command or option gets 'did you mean', exit 64")
    func suggestions() async {
        let command = await runInProcess(["lss", "photos"])
        #expect(command.status == 64)
        #expect(command.error == "Error: unknown command 'lss'. Did you mean 'ls'? See 'blob help'.\n")
        let helpTopic = await runInProcess(["help", "stta"])
        #expect(helpTopic.error == "Error: unknown command 'stta'. Did you mean 'stat'? See 'blob help'.\n")
        let option = await runInProcess(["ls", "photos", "--typ", "image/"])
        #expect(option.status == 64 && option.error == "Error: unknown option '--typ'. Did you mean '--type'? See 'blob help ls'.\n")
        let global = await runInProcess(["--jsn", "stores"])
        #expect(global.error == "Error: unknown option '--jsn'. Did you mean '--json'? See 'blob help'.\n")
        let oneDash = await runInProcess(["put", "s/x", "-type", "text/plain"])
        #expect(oneDash.error.contains("Did you mean '--type'?"))
        let abbreviation = await runInProcess(["complet", "bash"])
        #expect(abbreviation.error.contains("Did you mean 'completion'?"))
        let nothingClose = await runInProcess(["frobnicate"])
        #expect(nothingClose.error == "Error: unknown command 'frobnicate'. See 'blob help'.\n")
    }

    @Test("edit distance counts insertions, deletions, substitutions and swaps")
    func distance() {
        #expect(Suggestions.distance("ls", "ls") == 0)
        #expect(Suggestions.distance("lss", "ls") == 1)
        #expect(Suggestions.distance("sl", "ls") == 1)
        #expect(Suggestions.distance("pt", "put") == 1)
        #expect(Suggestions.distance("", "abc") == 3)
        #expect(Suggestions.closest(to: "x", among: ["ls", "rm"]).isEmpty)
        #expect(Suggestions.closest(to: "pet", among: ["put", "get", "rm"]) == ["put", "get"])
    }

    @Test("--type must be TYPE/SUBTYPE with optional parameters (exit 64); without it the extension decides")
    func contentTypes() async throws {
        for bad in ["text", "text/", "/plain", "te xt/plain", "text/plain; charset", "text/plain;=x", "image/png; a=b c"] {
            let run = await runInProcess(["--socket", "/s", "put", "s/x", "--type", bad], daemon: { _ in MemoryBackend() })
            #expect(run.status == 64, "\(bad)")
            #expect(run.error.hasPrefix("Error: '--type \(bad)' is not a media type"), "\(run.error)")
        }
        for good in ["text/plain", "text/plain; charset=utf-8", "application/vnd.api+json", "text/plain;format=\"a b\""] {
            #expect(ContentTypes.violation(good) == nil, "\(good)")
        }
        #expect(ContentTypes.guess(forName: "notes/today.TXT") == "text/plain")
        #expect(ContentTypes.guess(forName: "a/b.tar.gz") == "application/gzip")
        #expect(ContentTypes.guess(forName: "cat.png") == nil)  // Images: the bytes decide.
        #expect(ContentTypes.guess(forName: ".bashrc") == nil && ContentTypes.guess(forName: "README") == nil)

        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.url.appendingPathComponent("root").path
        let text = folder.file("notes.md")
        try Data("# hi".utf8).write(to: text)
        let fromFile = try runBlob(["--root", root, "--json", "put", "s/readme", text.path]).json()
        #expect(fromFile["contentType"] as? String == "text/markdown")
        let fromIdentifier = try runBlob(["--root", root, "--json", "put", "s/data.json"], input: Data("{}".utf8)).json()
        #expect(fromIdentifier["contentType"] as? String == "application/json")
        let given = try runBlob(["--root", root, "--json", "put", "s/data2.json", "--type", "text/plain"], input: Data("{}".utf8)).json()
        #expect(given["contentType"] as? String == "text/plain")
        let png = folder.file("real.txt")
        try pngHeader(width: 2, height: 3).write(to: png)
        let imageFlag = try runBlob(["--root", root, "--json", "put", "s/real", png.path, "--image"]).json()
        #expect(imageFlag["contentType"] as? String == "image/png", "--image: the bytes decide, not the .txt name")
        let sniffed = try runBlob(["--root", root, "--json", "put", "s/fake.png", "-"], input: Data("not an image".utf8)).json()
        #expect(sniffed["contentType"] as? String == "application/octet-stream")
        let image = try runBlob(["--root", root, "--json", "put", "s/pic.png", "-"], input: pngHeader(width: 2, height: 3)).json()
        #expect(image["contentType"] as? String == "image/png")
    }

    @Test("put STORE/PREFIX/ FILE names the blob after the file; get -o DIR/ and -o . name the file after the blob")
    func namesFromPaths() throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.url.appendingPathComponent("root").path
        let source = folder.file("tom.txt")
        try Data("tom".utf8).write(to: source)
        let put = try runBlob(["--root", root, "--json", "put", "photos/cats/", source.path])
        #expect(put.status == 0, "\(put.errorText)")
        #expect(try put.json()["identifier"] as? String == "cats/tom.txt")
        let noFile = try runBlob(["--root", root, "put", "photos/cats/"], input: Data("x".utf8))
        #expect(noFile.status == 64 && noFile.errorText.contains("ends with '/'"))

        let out = folder.url.appendingPathComponent("out", isDirectory: true)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let intoFolder = try runBlob(["--root", root, "get", "photos/cats/tom.txt", "-o", out.path + "/"])
        #expect(intoFolder.status == 0 && intoFolder.outputText == "wrote 3 B of photos/cats/tom.txt to \(out.path)/tom.txt\n")
        #expect(try Data(contentsOf: out.appendingPathComponent("tom.txt")) == Data("tom".utf8))
        try FileManager.default.removeItem(at: out.appendingPathComponent("tom.txt"))
        let existingFolder = try runBlob(["--root", root, "get", "photos/cats/tom.txt", "-o", out.path])
        #expect(existingFolder.status == 0 && FileManager.default.fileExists(atPath: out.path + "/tom.txt"))
        let dot = try runBlob(["--root", root, "get", "photos/cats/tom.txt", "-o", "."], directory: out)
        #expect(dot.status == 0 && dot.outputText == "wrote 3 B of photos/cats/tom.txt to ./tom.txt\n")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(leftovers == ["tom.txt"])
    }

    @Test("rm -r removes by prefix or the whole store with --yes; refused without --yes when standard input is not a terminal")
    func removeByPrefix() async throws {
        let backend = MemoryBackend()
        let store = try backend.memoryStore("s", create: true)
        for name in ["a/1", "a/2", "b/1", "c"] { try await store.put(Data(name.utf8), identifier: name) }
        let connect: DaemonConnector = { _ in backend }

        let refused = await runInProcess(["--socket", "/x", "rm", "-r", "s/a/"], daemon: connect)
        #expect(refused.status == 64 && refused.error.contains("needs --yes when standard input is not a terminal"))
        #expect(try await store.exists("a/1"))

        let prefix = await runInProcess(["--socket", "/x", "rm", "-r", "--yes", "s/a/"], daemon: connect)
        #expect(prefix.status == 0 && prefix.outputText == "removed s/a/1\nremoved s/a/2\n")
        #expect(try await store.exists("b/1"))

        let nothing = await runInProcess(["--socket", "/x", "rm", "-r", "-y", "s/zzz"], daemon: connect)
        #expect(nothing.status == 2 && nothing.error == "blob: no blobs to remove in store 's' under prefix 'zzz'\n")
        #expect(await runInProcess(["--socket", "/x", "rm", "-rfy", "s/zzz", "nostore"], daemon: connect).status == 0)

        let whole = await runInProcess(["--socket", "/x", "--json", "rm", "--recursive", "--yes", "s"], daemon: connect)
        #expect(whole.status == 0)
        let removed = try #require((try JSONSerialization.jsonObject(with: whole.output) as? [String: Any])?["removed"] as? [[String: Any]])
        #expect(removed.map { $0["identifier"] as? String } == ["b/1", "c"])
        #expect(try await store.list(ListQuery()).items.isEmpty)

        let missingStore = await runInProcess(["--socket", "/x", "rm", "-r", "-y", "nostore"], daemon: connect)
        #expect(missingStore.status == 2 && missingStore.error.hasPrefix("blob: store 'nostore' not found"))
        let storeOnly = await runInProcess(["--socket", "/x", "rm", "s"], daemon: connect)
        #expect(storeOnly.status == 64 && storeOnly.error.contains("names no blob; to remove every blob under it, add -r"))
        let conditional = await runInProcess(["--socket", "/x", "rm", "-r", "-y", "s/a", "--if-match", "0123456789abcdef"], daemon: connect)
        #expect(conditional.status == 64)
    }

    @Test("--json metadata has the keys of the HTTP metadata object in docs/PROTOCOL.md (plus store)")
    func jsonMatchesProtocol() throws {
        let protocolDoc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: protocolDoc, encoding: .utf8)
        let section = try #require(text.range(of: "## Metadata object"))
        let start = try #require(text.range(of: "```json\n", range: section.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let example = try #require(JSONSerialization.jsonObject(with: Data(text[start.upperBound..<end.lowerBound].utf8)) as? [String: Any])

        let folder = TempFolder()
        defer { folder.cleanUp() }
        let root = folder.url.appendingPathComponent("root").path
        let put = try runBlob(["--root", root, "--json", "put", "photos/2024/cat.png", "-", "--meta", "author=ada"], input: pngHeader(width: 640, height: 480)).json()
        #expect(Set(put.keys) == Set(example.keys).union(["store"]))
        #expect(Set((put["image"] as? [String: Any])?.keys ?? [:].keys) == Set((example["image"] as? [String: Any])?.keys ?? [:].keys))
        for key in ["created", "modified"] {
            let date = try #require(put[key] as? String)
            #expect(date.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(date)")
        }
        let plain = try runBlob(["--root", root, "--json", "stat", "photos/2024/cat.png"]).json()
        #expect(plain["metadata"] as? [String: String] == ["author": "ada"])
        let text2 = try runBlob(["--root", root, "--json", "put", "photos/note", "-"], input: Data("x".utf8)).json()
        #expect(text2["image"] == nil, "image is absent for non-images, as in HTTP")
    }

    @Test("--version prints the shared version; blobd --version prints the same")
    func version() async throws {
        let run = await runInProcess(["--version"])
        #expect(run.status == 0 && run.outputText == "blob \(BlobStoreVersion)\n")
        if let blobd = BlobdBinary.url {
            let process = Process()
            process.executableURL = blobd
            process.arguments = ["--version"]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(String(decoding: output, as: UTF8.self) == "blobd \(BlobStoreVersion)\n")
        }
    }
}
