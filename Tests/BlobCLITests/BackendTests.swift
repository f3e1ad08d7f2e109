@testable import BlobCLI
import BlobStore
import Foundation
import Testing

/// The commands against a backend that is not the embedded store: what the daemon's backend will do.
@Suite("Commands on a plugged-in backend")
struct BackendTests {
    @Test("put, get, stat, ls, rm, stores through a DaemonConnector")
    func pluggedBackend() async throws {
        let backend = MemoryBackend()
        let connector: DaemonConnector = { socket in
            #expect(socket == "/tmp/test.sock")
            return backend
        }
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let content = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try content.write(to: folder.file("in.bin"))
        let globals = ["--socket", "/tmp/test.sock"]

        let put = await runInProcess(globals + ["--json", "put", "box/a/b", folder.file("in.bin").path, "--meta", "k=v"], daemon: connector)
        #expect(put.status == 0, "\(put.error)")
        let object = try #require(try JSONSerialization.jsonObject(with: put.output) as? [String: Any])
        #expect(object["store"] as? String == "box" && object["identifier"] as? String == "a/b" && object["size"] as? Int == 1000)

        let get = await runInProcess(globals + ["get", "box/a/b"], daemon: connector)
        #expect(get.status == 0 && get.output == content)
        let range = await runInProcess(globals + ["get", "box/a/b", "--range", "10-19"], daemon: connector)
        #expect(range.output == content[10..<20])
        let suffix = await runInProcess(globals + ["get", "box/a/b", "--range", "-5"], daemon: connector)
        #expect(suffix.output == content.suffix(5))

        let stat = await runInProcess(globals + ["stat", "box/a/b"], daemon: connector)
        #expect(stat.outputText.contains("1000 B (1,000 bytes)") && stat.outputText.contains("k=v"))
        let ls = await runInProcess(globals + ["ls", "box/a/"], daemon: connector)
        #expect(ls.outputText.contains("a/b"))
        let stores = await runInProcess(globals + ["stores"], daemon: connector)
        #expect(stores.outputText.contains("box") && stores.outputText.contains("1000 B"))
        let missingStore = await runInProcess(globals + ["stat", "nope/x"], daemon: connector)
        #expect(missingStore.status == 2 && missingStore.error == "blob: store 'nope' not found (memory)\n")
        let rm = await runInProcess(globals + ["rm", "box/a/b"], daemon: connector)
        #expect(rm.status == 0 && rm.outputText == "removed box/a/b\n")
        let again = await runInProcess(globals + ["rm", "box/a/b"], daemon: connector)
        #expect(again.status == 2 && again.error == "blob: blob 'a/b' not found in store 'box'\n")
        let forced = await runInProcess(globals + ["rm", "-f", "box/a/b"], daemon: connector)
        #expect(forced.status == 0)
    }

    @Test("put reads standard input when FILE is absent or '-'")
    func putFromInput() async throws {
        let backend = MemoryBackend()
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let content = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try content.write(to: folder.file("stdin.bin"))
        for args in [["put", "box/x"], ["put", "box/x", "-"]] {
            let fd = open(folder.file("stdin.bin").path, O_RDONLY)
            defer { close(fd) }
            let run = await runInProcess(["--socket", "/s"] + args, input: fd, daemon: { _ in backend })
            #expect(run.status == 0, "\(run.error)")
            let stored = try await backend.memoryStore("box", create: false).get("x")
            #expect(stored == content)
        }
    }

    @Test("watch prints one line per event; --json one object per line")
    func watch() async throws {
        for json in [false, true] {
            let backend = MemoryBackend(eventLimit: 3) { store in
                try await store.put(Data("one".utf8), identifier: "a", contentType: "text/plain")
                try await store.put(pngHeader(width: 640, height: 480), identifier: "b.png")
                try await store.remove("a")
            }
            _ = try backend.memoryStore("photos", create: true)
            let run = await runInProcess(["--socket", "/s"] + (json ? ["--json"] : []) + ["watch", "photos"], daemon: { _ in backend })
            #expect(run.status == 0, "\(run.error)")
            let lines = run.outputText.split(separator: "\n").map(String.init)
            #expect(lines.count == 3)
            if json {
                let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
                #expect(objects.map { $0["kind"] as? String } == ["put", "put", "removed"])
                #expect(objects.map { $0["sequence"] as? Int } == [1, 2, 3])
                #expect(objects[1]["identifier"] as? String == "b.png")
                #expect(((objects[1]["blob"] as? [String: Any])?["image"] as? [String: Any])?["width"] as? Int == 640)
            } else {
                #expect(lines[0].contains("#1        put                 3 B  text/plain  ") && lines[0].hasSuffix("  photos/a"))
                #expect(lines[1].contains("photos/b.png") && lines[1].contains("640×480"))
                #expect(lines[2].contains("#3        removed  ") && lines[2].hasSuffix("  photos/a"))
            }
        }
    }

    @Test("a connector's own failure is reported with its exit code")
    func connectorFailure() async {
        let run = await runInProcess(["--socket", "/s", "stores"]) { socket in
            throw CLIError.daemonUnreachable(socket: socket, reason: "ECONNREFUSED (Connection refused)")
        }
        #expect(run.status == 69)
        #expect(run.error == "blob: cannot reach the daemon at /s: ECONNREFUSED (Connection refused); start it with 'blobd', or use '--root DIR' for the embedded store\n")
    }
}
