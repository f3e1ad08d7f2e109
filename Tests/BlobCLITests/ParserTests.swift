@testable import BlobCLI
import BlobStore
import Foundation
import Testing

@Suite("Argument parsing")
struct ParserTests {
    static let commandNames = ["put", "get", "rm", "ls", "stat", "stores", "watch", "verify"]

    @Test("global options are found before and after the command name")
    func globalsAnywhere() throws {
        let a = try ArgumentParser.split(["--root", "/r", "--json", "ls", "photos"])
        #expect(a.globals.root == "/r" && a.globals.json && a.command == "ls" && a.rest == ["photos"])
        let b = try ArgumentParser.split(["ls", "photos", "--json", "--root=/r"])
        #expect(b.globals.root == "/r" && b.globals.json && b.command == "ls" && b.rest == ["photos"])
        let c = try ArgumentParser.split(["--socket", "/s.sock", "stores"])
        #expect(c.globals.socket == "/s.sock" && c.globals.root == nil)
    }

    @Test("'--' ends the options; '-' is a positional")
    func endOfOptions() throws {
        let split = try ArgumentParser.split(["put", "s/x", "--", "--json"])
        #expect(!split.globals.json && split.rest == ["s/x", "--", "--json"])
        let parsed = try ArgumentParser.parse(split.rest, spec: PutCommand.spec)
        #expect(parsed.positionals == ["s/x", "--json"])
        let dash = try ArgumentParser.parse(["s/x", "-"], spec: PutCommand.spec)
        #expect(dash.positionals == ["s/x", "-"])
    }

    @Test("long, inline, short, attached and repeatable options")
    func optionForms() throws {
        let put = try ArgumentParser.parse(
            ["s/x", "f", "--type=text/plain", "--meta", "a=1", "--meta", "b=2=3", "--image"], spec: PutCommand.spec)
        #expect(put.value("type") == "text/plain")
        #expect(put.values("meta") == ["a=1", "b=2=3"])
        #expect(put.flag("image") && !put.flag("record"))
        let get = try ArgumentParser.parse(["s/x", "-oout.bin"], spec: GetCommand.spec)
        #expect(get.value("output") == "out.bin")
        let get2 = try ArgumentParser.parse(["-o", "out.bin", "s/x"], spec: GetCommand.spec)
        #expect(get2.value("output") == "out.bin" && get2.positionals == ["s/x"])
    }

    @Test("every command accepts a typical command line")
    func everyCommandParses() throws {
        let lines: [[String]] = [
            ["put", "photos/cats/tom.png", "tom.png", "--type", "image/png", "--meta", "k=v", "--image", "--if-none-match"],
            ["put", "records/r", "-", "--record", "--if-match", "0123456789abcdef"],
            ["get", "photos/a/b", "-o", "x", "--range", "0-9"],
            ["rm", "photos/a", "photos/b", "-f"],
            ["rm", "photos/a", "--if-match", "0123456789abcdef"],
            ["ls", "photos/cats/", "--type", "image/", "--sort", "modified", "--limit", "5", "--cursor", "i00", "--all"],
            ["stat", "photos/a"],
            ["stores"],
            ["watch"], ["watch", "photos"],
            ["verify"], ["verify", "photos"],
        ]
        for line in lines {
            let split = try ArgumentParser.split(line)
            let command = try #require(Commands.named(split.command ?? ""))
            _ = try command.init(try ArgumentParser.parse(split.rest, spec: command.spec))
        }
    }

    @Test("put builds its options")
    func putOptions() throws {
        let put = try PutCommand(ArgumentParser.parse(
            ["photos/a/b/c", "--type", "text/plain", "--meta", "owner=ann", "--if-match", "\"0123456789abcdef\"", "--record"],
            spec: PutCommand.spec))
        #expect(put.address == BlobAddress(store: "photos", identifier: "a/b/c"))
        #expect(put.file == nil)
        #expect(put.options.contentType == "text/plain")
        #expect(put.options.userMetadata == ["owner": "ann"])
        #expect(put.options.condition == .ifMatch(ETag("0123456789abcdef")!))
        #expect(put.options.validation == .record)
    }

    @Test("ls splits STORE[/PREFIX] and reads its query options")
    func lsQuery() throws {
        let ls = try LsCommand(ArgumentParser.parse(["photos/cats/", "--sort", "modified", "--limit", "7", "--type", "image/"], spec: LsCommand.spec))
        #expect(ls.store == "photos" && ls.query.prefix == "cats/" && ls.query.sort == .modified && ls.query.limit == 7)
        #expect(ls.query.contentTypePrefix == "image/" && !ls.all)
        let bare = try LsCommand(ArgumentParser.parse(["photos"], spec: LsCommand.spec))
        #expect(bare.store == "photos" && bare.query.prefix == "")
    }

    @Test("STORE/ID splits at the first slash")
    func addresses() throws {
        #expect(try BlobAddress.parse("s/a/b/c", command: "get") == BlobAddress(store: "s", identifier: "a/b/c"))
        #expect(try BlobAddress.parse("s//x", command: "get") == BlobAddress(store: "s", identifier: "/x"))
        #expect(try BlobAddress.parse("s/ü ✓", command: "get").identifier == "ü ✓")
    }

    @Test("byte ranges")
    func ranges() throws {
        #expect(try ByteRangeSpec.parse("0-9", command: "get").resolved(size: 100) == 0..<10)
        #expect(try ByteRangeSpec.parse("90-", command: "get").resolved(size: 100) == 90..<Int64.max)
        #expect(try ByteRangeSpec.parse("-10", command: "get").resolved(size: 100) == 90..<100)
        #expect(try ByteRangeSpec.parse("-500", command: "get").resolved(size: 100) == 0..<100)
        for bad in ["", "-", "9-1", "a-b", "1", "-0", "1-2-3", "+1-2"] {
            #expect(throws: UsageError.self) { try ByteRangeSpec.parse(bad, command: "get") }
        }
    }

    @Test("backend choice: --root, --socket, BLOB_SOCKET, XDG_RUNTIME_DIR, /tmp")
    func backendChoice() {
        #expect(BackendChoice.resolve(GlobalOptions(root: "/r"), environment: ["BLOB_SOCKET": "/s"]) == .embedded(root: "/r"))
        #expect(BackendChoice.resolve(GlobalOptions(socket: "/x"), environment: ["BLOB_SOCKET": "/s"]) == .daemon(socket: "/x"))
        #expect(BackendChoice.resolve(GlobalOptions(), environment: ["BLOB_SOCKET": "/s"]) == .daemon(socket: "/s"))
        #expect(BackendChoice.resolve(GlobalOptions(), environment: ["XDG_RUNTIME_DIR": "/run/user/7"]) == .daemon(socket: "/run/user/7/blobstore/blobd.sock"))
        #expect(BackendChoice.resolve(GlobalOptions(), environment: [:]) == .daemon(socket: "/tmp/blobstore-\(getuid())/blobd.sock"))
    }

    @Test("--help, -h and 'help COMMAND' show each command's help", arguments: commandNames)
    func helpEverywhere(name: String) async {
        for line in [[name, "--help"], [name, "-h"], ["help", name], ["--json", name, "--help"], [name, "photos/x", "--help"]] {
            let run = await runInProcess(line)
            #expect(run.status == 0, "\(line)")
            #expect(run.outputText.hasPrefix("OVERVIEW: "), "\(line)")
            #expect(run.outputText.contains("USAGE: blob \(name)"), "\(line)")
            #expect(run.outputText.contains("OPTIONS:"), "\(line)")
            #expect(run.outputText.contains("-h, --help"), "\(line)")
            #expect(run.error.isEmpty, "\(line)")
        }
    }

    @Test("the top-level help lists every command and exit code")
    func rootHelp() async {
        for line in [[], ["help"], ["--help"], ["-h"], ["help", "help"]] {
            let run = await runInProcess(line)
            #expect(run.status == 0)
            #expect(run.outputText.contains("USAGE: blob [--root DIR | --socket PATH | --backend s3://BUCKET[/PREFIX]] [--json] COMMAND"))
            for name in Self.commandNames { #expect(run.outputText.contains("\n  \(name) ")) }
            for code in ExitCode.allCases { #expect(run.outputText.contains("\n  \(code.rawValue) ")) }
        }
        let version = await runInProcess(["--version"])
        #expect(version.status == 0 && version.outputText.hasPrefix("blob "))
    }

    @Test("usage errors print one line with a hint and exit 64", arguments: [
        (["put"], "Error: missing STORE/ID. See 'blob help put'."),
        (["get"], "Error: missing STORE/ID. See 'blob help get'."),
        (["rm"], "Error: missing STORE/ID. See 'blob help rm'."),
        (["stat"], "Error: missing STORE/ID. See 'blob help stat'."),
        (["ls"], "Error: missing STORE[/PREFIX]. See 'blob help ls'."),
        (["stores", "extra"], "Error: unexpected argument 'extra'. See 'blob help stores'."),
        (["verify", "a", "b"], "Error: unexpected argument 'b'. See 'blob help verify'."),
        (["watch", "a", "b"], "Error: unexpected argument 'b'. See 'blob help watch'."),
        (["put", "photos"], "Error: 'photos' has no identifier (expected STORE/ID). See 'blob help put'."),
        (["put", "photos/"], "Error: 'photos/' ends with '/': give a FILE to take the blob's name from, or the whole STORE/ID. See 'blob help put'."),
        (["get", "Photos/x"], "Error: invalid store name 'Photos': a store name must start with a lowercase letter or digit. See 'blob help get'."),
        (["put", "s/x", "--bogus"], "Error: unknown option '--bogus'. See 'blob help put'."),
        (["get", "s/x", "-z"], "Error: unknown option '-z'. See 'blob help get'."),
        (["put", "s/x", "--type"], "Error: missing value for '--type'. See 'blob help put'."),
        (["put", "s/x", "--image", "--record"], "Error: '--image' and '--record' cannot be used together. See 'blob help put'."),
        (["put", "s/x", "--if-none-match", "--if-match", "0123456789abcdef"], "Error: '--if-none-match' and '--if-match' cannot be used together. See 'blob help put'."),
        (["put", "s/x", "--if-match", "nope"], "Error: 'nope' is not an ETag for '--if-match' (expected 16 lowercase hex digits). See 'blob help put'."),
        (["put", "s/x", "--meta", "novalue"], "Error: '--meta novalue' needs the form key=value. See 'blob help put'."),
        (["put", "s/x", "--type", "a", "--type", "b"], "Error: '--type' given twice. See 'blob help put'."),
        (["put", "s/x", "f", "g"], "Error: unexpected argument 'g'. See 'blob help put'."),
        (["put", "s/x", "--image=yes"], "Error: '--image' takes no value. See 'blob help put'."),
        (["rm", "s/a", "s/b", "--if-match", "0123456789abcdef"], "Error: '--if-match' applies to one blob (got 2). See 'blob help rm'."),
        (["ls", "s", "--limit", "0"], "Error: '--limit' must be a whole number in 1...10000 (got '0'). See 'blob help ls'."),
        (["ls", "s", "--sort", "size"], "Error: '--sort' must be one of identifier, modified (got 'size'). See 'blob help ls'."),
        (["get", "s/x", "--range", "5-1"], "Error: '--range 5-1' must be A-B, A- or -N with whole byte offsets, A ≤ B. See 'blob help get'."),
        (["frobnicate"], "Error: unknown command 'frobnicate'. See 'blob help'."),
        (["help", "frobnicate"], "Error: unknown command 'frobnicate'. See 'blob help'."),
        (["--bogus", "ls"], "Error: unknown option '--bogus'. See 'blob help'."),
        (["--root", "/r", "--socket", "/s", "stores"], "Error: '--root' and '--socket' cannot be used together. See 'blob help stores'."),
        (["stores", "--root"], "Error: missing value for '--root'. See 'blob help stores'."),
    ])
    func usageErrors(arguments: [String], expected: String) async {
        let run = await runInProcess(arguments)
        #expect(run.status == 64)
        #expect(run.error == expected + "\n")
        #expect(run.output.isEmpty)
    }

    @Test("usage errors win over a missing daemon")
    func usageBeforeBackend() async {
        let run = await runInProcess(["put"])
        #expect(run.status == 64)
    }

    @Test("without --root and without a daemon client: exit 69 naming the socket")
    func noDaemon() async {
        let run = await runInProcess(["ls", "photos"], environment: ["XDG_RUNTIME_DIR": "/run/user/4242"])
        #expect(run.status == 69)
        #expect(run.error.hasPrefix("blob: cannot reach the daemon at /run/user/4242/blobstore/blobd.sock"))
        #expect(run.error.contains("blobd") && run.error.contains("--root"))
        let explicit = await runInProcess(["--socket", "/tmp/nowhere.sock", "stores"])
        #expect(explicit.status == 69 && explicit.error.contains("/tmp/nowhere.sock"))
        let env = await runInProcess(["stores"], environment: ["BLOB_SOCKET": "/tmp/env.sock"])
        #expect(env.status == 69 && env.error.contains("/tmp/env.sock"))
    }

    @Test("watch with --root is a usage error with the daemon hint")
    func watchNeedsDaemon() async throws {
        let folder = TempFolder()
        defer { folder.cleanUp() }
        let run = await runInProcess(["--root", folder.path, "watch"])
        #expect(run.status == 64)
        #expect(run.error.contains("'watch' needs the daemon") && run.error.hasSuffix("See 'blob help watch'.\n"))
    }
}
