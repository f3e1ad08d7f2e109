import Foundation
import Testing

/// Runs the built `blob` binary as a subprocess against a temporary `--root`.
@Suite("blob binary, end to end", .serialized, .enabled(if: BlobBinary.url != nil, BlobBinary.missingReason))
struct EndToEndTests {
    let folder: TempFolder
    var root: String { folder.url.appendingPathComponent("root").path }

    init() throws { folder = TempFolder() }

    func blob(_ arguments: [String], input: Data? = nil, pause: Double = 0) throws -> ProcessRun {
        try runBlob(["--root", root] + arguments, input: input, pauseMidInput: pause)
    }

    static func random(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = generator.next() }
        return Data(bytes)
    }

    @Test("all 256 byte values through stdin and stdout, byte-exact")
    func allByteValues() throws {
        defer { folder.cleanUp() }
        let content = Data((0..<1024).map { UInt8($0 % 256) })
        let put = try blob(["put", "bin/every-byte"], input: content)
        #expect(put.status == 0, "\(put.errorText)")
        let get = try blob(["get", "bin/every-byte"])
        #expect(get.status == 0 && get.output == content)
        let dash = try blob(["put", "bin/dash", "-"], input: content)
        #expect(dash.status == 0)
        #expect(try blob(["get", "bin/dash"]).output == content)
        let empty = try blob(["put", "bin/empty"], input: Data())
        #expect(empty.status == 0)
        let emptyGet = try blob(["get", "bin/empty"])
        #expect(emptyGet.status == 0 && emptyGet.output.isEmpty)
    }

    @Test("1 MiB of random bytes: stdin, file, stdout, -o, --range")
    func randomMegabyte() throws {
        defer { folder.cleanUp() }
        let content = Self.random(1 << 20)
        #expect(try blob(["put", "bin/r1"], input: content).status == 0)
        #expect(try blob(["get", "bin/r1"]).output == content)
        let file = folder.file("in.bin")
        try content.write(to: file)
        #expect(try blob(["put", "bin/r2", file.path]).status == 0)
        let out = folder.file("out.bin")
        let get = try blob(["get", "bin/r2", "-o", out.path])
        #expect(get.status == 0 && get.outputText.hasPrefix("wrote 1.0 MiB of bin/r2 to "))
        #expect(try Data(contentsOf: out) == content)
        let range = try blob(["get", "bin/r2", "--range", "1000-1999"])
        #expect(range.output == content[1000..<2000])
        let rangeFile = folder.file("part.bin")
        #expect(try blob(["get", "bin/r2", "--range", "1048000-", "-o", rangeFile.path]).status == 0)
        #expect(try Data(contentsOf: rangeFile) == content[1_048_000...])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".part-") }
        #expect(leftovers.isEmpty)
        let beyond = try blob(["get", "bin/r2", "--range", "2000000-"])
        #expect(beyond.status == 1 && beyond.errorText.contains("outside blob 'r2'"))
    }

    @Test("no progress output on stderr when stderr is a pipe, even for a slow transfer")
    func noProgressOnPipe() throws {
        defer { folder.cleanUp() }
        let content = Self.random(3 << 20)
        let put = try blob(["put", "bin/slow"], input: content, pause: 1.5)
        #expect(put.status == 0)
        #expect(put.error.isEmpty, "stderr: \(put.errorText)")
        let get = try blob(["get", "bin/slow"])
        #expect(get.output == content && get.error.isEmpty)
    }

    @Test("exit codes: not found 2, create-only twice 3, bad ETag 3, bad image 4, bad record 4, bad metadata 4, usage 64, no daemon 69")
    func exitCodes() throws {
        defer { folder.cleanUp() }
        #expect(try blob(["put", "s/x"], input: Data("a".utf8)).status == 0)

        let missing = try blob(["get", "s/nope"])
        #expect(missing.status == 2 && missing.errorText == "blob: blob 'nope' not found in store 's'\n" && missing.output.isEmpty)
        let noStore = try blob(["stat", "other/x"])
        #expect(noStore.status == 2 && noStore.errorText.hasPrefix("blob: store 'other' not found"))
        #expect(!FileManager.default.fileExists(atPath: root + "/other"))
        #expect(try blob(["ls", "other"]).status == 2)

        #expect(try blob(["put", "s/once", "--if-none-match"], input: Data("1".utf8)).status == 0)
        let twice = try blob(["put", "s/once", "--if-none-match"], input: Data("2".utf8))
        #expect(twice.status == 3 && twice.errorText.hasPrefix("blob: precondition failed for blob 'once' in store 's'"))
        let wrongTag = try blob(["put", "s/once", "--if-match", "0000000000000000"], input: Data("3".utf8))
        #expect(wrongTag.status == 3)
        let rmWrongTag = try blob(["rm", "s/once", "--if-match", "0000000000000000"])
        #expect(rmWrongTag.status == 3)

        let notImage = try blob(["put", "s/img", "--image"], input: Data("<html>".utf8))
        #expect(notImage.status == 4 && notImage.errorText.contains("is not a recognised image"))
        #expect(try blob(["stat", "s/img"]).status == 2)
        let badRecord = try blob(["put", "s/rec", "--record"], input: Data("{nope".utf8))
        #expect(badRecord.status == 4 && badRecord.errorText.contains("not a valid record"))
        let badMeta = try blob(["put", "s/m", "--meta", "Bad Key=1"], input: Data("x".utf8))
        #expect(badMeta.status == 4 && badMeta.errorText.contains("invalid metadata"))

        let usage = try blob(["put"])
        #expect(usage.status == 64 && usage.errorText == "Error: missing STORE/ID. See 'blob help put'.\n")
        let watch = try blob(["watch"])
        #expect(watch.status == 64)

        let noDaemon = try runBlob(["stores"], environment: ["XDG_RUNTIME_DIR": folder.path])
        #expect(noDaemon.status == 69)
        #expect(noDaemon.errorText.contains(folder.path + "/blobstore/blobd.sock"))

        let missingFile = try blob(["put", "s/f", folder.file("does-not-exist").path])
        #expect(missingFile.status == 74 && missingFile.errorText.contains("ENOENT"))
    }

    @Test("put and stat show metadata; images show format and 640×480; --json parses")
    func putAndStat() throws {
        defer { folder.cleanUp() }
        let png = pngHeader(width: 640, height: 480)
        try png.write(to: folder.file("tom.png"))
        let put = try blob(["--json", "put", "photos/cats/tom.png", folder.file("tom.png").path, "--image", "--meta", "owner=ann", "--meta", "year=2024"])
        #expect(put.status == 0, "\(put.errorText)")
        let metadata = try put.json()
        #expect(metadata["store"] as? String == "photos")
        #expect(metadata["identifier"] as? String == "cats/tom.png")
        #expect(metadata["size"] as? Int == png.count)
        #expect(metadata["contentType"] as? String == "image/png")
        let etag = try #require(metadata["etag"] as? String)
        #expect(etag.count == 16)
        #expect((metadata["metadata"] as? [String: String]) == ["owner": "ann", "year": "2024"])
        let image = try #require(metadata["image"] as? [String: Any])
        #expect(image["format"] as? String == "png" && image["width"] as? Int == 640 && image["height"] as? Int == 480)
        for key in ["created", "modified"] { #expect((metadata[key] as? String)?.hasSuffix("Z") == true) }

        let stat = try blob(["stat", "photos/cats/tom.png"])
        #expect(stat.status == 0)
        for expected in ["Blob:          photos/cats/tom.png", "Content type:  image/png", "ETag:          \(etag)", "Image:         PNG 640×480", "owner=ann", "(\(png.count) bytes)"] {
            #expect(stat.outputText.contains(expected), "\(expected)")
        }
        let statJSON = try blob(["stat", "--json", "photos/cats/tom.png"]).json()
        #expect(statJSON["etag"] as? String == etag)

        let replace = try blob(["put", "photos/cats/tom.png", "--if-match", etag, "--type", "text/plain"], input: Data("text".utf8))
        #expect(replace.status == 0 && replace.outputText.contains("Content type:  text/plain"))

        let record = try blob(["--json", "put", "records/r1", "--record"], input: Data(#"{"a":1}"#.utf8)).json()
        #expect(record["contentType"] as? String == "application/json")
    }

    @Test("ls: prefix, type filter, sort, limit with cursor, --all, --json")
    func listing() throws {
        defer { folder.cleanUp() }
        for name in ["a/1", "a/2", "a/3", "b/1", "c"] {
            #expect(try blob(["put", "s/\(name)", "--type", name.hasPrefix("a") ? "text/plain" : "application/x-test"], input: Data(name.utf8)).status == 0)
        }
        let all = try blob(["ls", "s"])
        #expect(all.status == 0)
        let lines = all.outputText.split(separator: "\n")
        #expect(lines.count == 6 && lines[0].contains("SIZE") && lines[0].hasSuffix("IDENTIFIER"))
        #expect(lines.dropFirst().map { $0.split(separator: " ").last.map(String.init) ?? "" } == ["a/1", "a/2", "a/3", "b/1", "c"])

        let prefixed = try blob(["--json", "ls", "s/a/"]).json()
        let items = try #require(prefixed["items"] as? [[String: Any]])
        #expect(items.map { $0["identifier"] as? String } == ["a/1", "a/2", "a/3"])
        #expect(prefixed["nextCursor"] is NSNull)

        let typed = try blob(["--json", "ls", "s", "--type", "application/"]).json()
        #expect((typed["items"] as? [[String: Any]])?.map { $0["identifier"] as? String } == ["b/1", "c"])

        let page1 = try blob(["--json", "ls", "s", "--limit", "2"]).json()
        #expect((page1["items"] as? [[String: Any]])?.count == 2)
        let cursor = try #require(page1["nextCursor"] as? String)
        let page2 = try blob(["--json", "ls", "s", "--limit", "2", "--cursor", cursor]).json()
        #expect((page2["items"] as? [[String: Any]])?.map { $0["identifier"] as? String } == ["a/3", "b/1"])

        let humanPage = try blob(["ls", "s", "--limit", "2"])
        #expect(humanPage.errorText.contains("--cursor "))

        let followed = try blob(["--json", "ls", "s", "--limit", "2", "--all", "--sort", "modified"]).json()
        #expect((followed["items"] as? [[String: Any]])?.count == 5)
        #expect(followed["nextCursor"] is NSNull)
        let followedText = try blob(["ls", "s", "--limit", "2", "--all"])
        #expect(followedText.outputText.split(separator: "\n").count == 6 && followedText.error.isEmpty)

        let badCursor = try blob(["ls", "s", "--cursor", "zzz"])
        #expect(badCursor.status == 64 && badCursor.errorText.contains("malformed cursor"))
    }

    @Test("rm: several blobs, missing ones, --force, --json")
    func remove() throws {
        defer { folder.cleanUp() }
        for name in ["x", "y", "z"] { #expect(try blob(["put", "s/\(name)"], input: Data(name.utf8)).status == 0) }
        let rm = try blob(["rm", "s/x", "s/y"])
        #expect(rm.status == 0 && rm.outputText == "removed s/x\nremoved s/y\n")
        let partial = try blob(["rm", "s/x", "s/z"])
        #expect(partial.status == 2 && partial.errorText == "blob: blob 'x' not found in store 's'\n")
        #expect(try blob(["stat", "s/z"]).status == 2)
        #expect(try blob(["rm", "-f", "s/x", "nostore/y"]).status == 0)
        #expect(try blob(["put", "s/w"], input: Data("w".utf8)).status == 0)
        let json = try blob(["--json", "rm", "s/w"]).json()
        let removed = try #require(json["removed"] as? [[String: Any]])
        #expect(removed.count == 1 && removed[0]["identifier"] as? String == "w" && removed[0]["existed"] as? Bool == true)
    }

    @Test("stores and verify, healthy and corrupt")
    func storesAndVerify() throws {
        defer { folder.cleanUp() }
        let empty = try blob(["--json", "stores"]).json()
        #expect((empty["stores"] as? [Any])?.isEmpty == true)
        #expect(try blob(["put", "alpha/a"], input: Data(repeating: 1, count: 2048)).status == 0)
        #expect(try blob(["put", "alpha/b"], input: Data(repeating: 2, count: 10)).status == 0)
        #expect(try blob(["put", "beta/c"], input: Data("c".utf8)).status == 0)
        try FileManager.default.createDirectory(atPath: root + "/Not-A-Store", withIntermediateDirectories: true)

        let stores = try blob(["stores"])
        #expect(stores.outputText == "NAME   COUNT     SIZE\nalpha      2  2.0 KiB\nbeta       1      1 B\n")
        let storesJSON = try blob(["--json", "stores"]).json()
        let list = try #require(storesJSON["stores"] as? [[String: Any]])
        #expect(list.map { $0["name"] as? String } == ["alpha", "beta"])
        #expect(list[0]["count"] as? Int == 2 && list[0]["bytes"] as? Int == 2058)

        let healthy = try blob(["verify"])
        #expect(healthy.status == 0 && healthy.outputText.contains("alpha") && healthy.outputText.contains("2 healthy"))
        let healthyJSON = try blob(["--json", "verify", "beta"]).json()
        #expect(healthyJSON["clean"] as? Bool == true && (healthyJSON["stores"] as? [Any])?.count == 1)

        // Damage one blob's content: flip the last byte of its file.
        let blobFile = try #require(FileManager.default.enumerator(atPath: root + "/alpha/b")?
            .compactMap { $0 as? String }
            .map { root + "/alpha/b/" + $0 }
            .first { path in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
                    && ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 2048
            })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: blobFile))
        let end = try handle.seekToEnd()
        try handle.seek(toOffset: end - 1)
        try handle.write(contentsOf: Data([0xFF]))
        try handle.close()

        let corrupt = try blob(["verify", "alpha"])
        #expect(corrupt.status == 1)
        #expect(corrupt.outputText.contains("1 corrupt") && corrupt.outputText.contains("corrupt: \(blobFile)"))
        #expect(corrupt.errorText == "blob: verification found 1 problem\n")
        let corruptJSON = try blob(["--json", "verify"])
        #expect(corruptJSON.status == 1)
        let object = try corruptJSON.json()
        #expect(object["clean"] as? Bool == false && object["problems"] as? Int == 1)
        let alpha = try #require((object["stores"] as? [[String: Any]])?.first)
        #expect((alpha["corrupt"] as? [[String: Any]])?.first?["path"] as? String == blobFile)

        #expect(try blob(["verify", "gamma"]).status == 2)
    }

    @Test("help from the binary")
    func help() throws {
        defer { folder.cleanUp() }
        let help = try runBlob(["help"])
        #expect(help.status == 0 && help.outputText.contains("EXIT CODES:"))
        let put = try runBlob(["put", "--help"])
        #expect(put.status == 0 && put.outputText.hasPrefix("OVERVIEW: Store a blob"))
    }
}
