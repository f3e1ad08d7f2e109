import BlobStore
import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `blob get STORE/ID [-o FILE] [--range A-B]`: writes a blob's content, byte-exact.
struct GetCommand: BlobCommand {
    static let spec = CommandSpec(
        name: "get",
        abstract: "Write a blob's content to standard output or a file.",
        discussion: """
            The content is written byte-exact (binary safe, no newline added) and streamed. With -o, the file \
            is written beside FILE under a temporary name and renamed over FILE only once complete, so FILE is \
            never left half-written; then the metadata is printed (with --json, as JSON). --json does not change \
            what is written to standard output without -o: the content. Binary content (a NUL byte or invalid \
            UTF-8 at its start) is not written to a terminal (exit 1) unless -o - asks for it.
            """,
        arguments: [ArgumentSpec("STORE/ID", help: "The store and the blob's identifier (split at the first '/').")],
        options: [
            OptionSpec("output", short: "o", .value(metavar: "FILE"), help: "Write to FILE (through a temporary file and a rename); to DIR/<last part of ID> for a folder (DIR/ or .); '-': standard output, even binary to a terminal."),
            OptionSpec("range", .value(metavar: "A-B"), help: "Only bytes A through B (inclusive, from 0); 'A-' to the end; '-N' the last N bytes."),
        ],
        examples: [
            "blob get photos/cats/tom.png > tom.png",
            "blob get photos/cats/tom.png -o tom.png",
            "blob get photos/cats/tom.png -o .            # writes ./tom.png",
            "blob get logs/today --range 0-1023 | less",
        ])

    let address: BlobAddress
    /// The file to write, as given (`nil`: standard output).
    let output: String?
    /// `-o -` was given: standard output even when it is a terminal and the content is binary.
    let forceStandardOutput: Bool
    let range: ByteRangeSpec?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        address = try BlobAddress.parse(arguments.positionals[0], command: Self.spec.name)
        let output = arguments.value("output")
        if let output, output.isEmpty { throw UsageError("'-o' needs a file name", command: Self.spec.name) }
        self.output = output == "-" ? nil : output
        forceStandardOutput = output == "-"
        range = try arguments.value("range").map { text throws(UsageError) in try ByteRangeSpec.parse(text, command: Self.spec.name) }
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.backend.readOnlyStore(address.store)
        let target = try output.map { try Self.outputPath($0, identifier: address.identifier) }
        var byteRange: Range<Int64>?
        if let range {
            let size = range.needsSize ? try await store.head(address.identifier).size : 0
            byteRange = range.resolved(size: size)
        }
        let stream = try await store.stream(address.identifier, range: byteRange, chunkSize: 1 << 20)
        let count = stream.range.upperBound - stream.range.lowerBound
        if let target {
            let progress = context.progress("get \(address) → \(target)", total: count)
            defer { progress.finish() }
            try await Self.writeAtomically(stream, to: target, progress: progress)
            progress.finish()
            try await report(stream.metadata, bytes: count, path: target, context: context)
            return
        }
        // Content on a terminal: no progress line in the middle of it, and no binary unless asked for.
        let toTerminal = context.console.outputIsTerminal
        let progress = context.progress("get \(address)", total: count, enabled: !toTerminal)
        defer { progress.finish() }
        var first = true
        for try await chunk in stream {
            if first && toTerminal && !forceStandardOutput && Self.looksBinary(chunk) {
                throw CLIError.binaryOutputToTerminal
            }
            first = false
            try await context.console.output.write(chunk)
            progress.add(chunk.count)
        }
    }

    /// Where `-o PATH` writes: `PATH` itself, or for a folder (`DIR/`, `.`, `..`, or an existing
    /// folder) the identifier's last component inside it, as `cp` and `curl -O` name files.
    static func outputPath(_ path: String, identifier: String) throws -> String {
        var isFolder = path.hasSuffix("/") || path == "." || path == ".."
        if !isFolder, let status = try? FileSystem.statusIfExists(path), status.kind == .directory { isFolder = true }
        guard isFolder else { return path }
        guard let last = identifier.split(separator: "/").last.map(String.init), last != ".", last != ".." else {
            throw CLIError.noFileName(identifier: identifier, folder: path)
        }
        return (path.hasSuffix("/") ? path : path + "/") + last
    }

    /// Whether `chunk` (the start of the content) is not text: it has a NUL byte or is not UTF-8
    /// (a character cut at the chunk's end does not count). curl uses the same NUL test.
    static func looksBinary(_ chunk: Data) -> Bool {
        chunk.withUnsafeBytes { raw -> Bool in
            let bytes = raw.bindMemory(to: UInt8.self)
            if let base = raw.baseAddress, memchr(base, 0, raw.count) != nil { return true }
            var index = 0
            while index < bytes.count {
                let lead = bytes[index]
                let length: Int
                switch lead {
                case 0x00...0x7F: length = 1
                case 0xC2...0xDF: length = 2
                case 0xE0...0xEF: length = 3
                case 0xF0...0xF4: length = 4
                default: return true
                }
                if index + length > bytes.count { return false }  // Cut at the end of the chunk.
                for offset in 1..<max(1, length) where bytes[index + offset] & 0xC0 != 0x80 { return true }
                index += length
            }
            return false
        }
    }

    private func report(_ metadata: BlobMetadata, bytes: Int64, path output: String, context: CommandContext) async throws {
        var json = JSONOutput.metadata(metadata, store: address.store)
        if case .object(var members) = json {
            members.append(("path", .string(output)))
            members.append(("bytesWritten", .int(bytes)))
            json = .object(members)
        }
        try await context.emit(
            json: json, text: "wrote \(Formatting.size(bytes)) of \(address) to \(output)")
    }

    /// Writes `stream` to a temporary file beside `path`, then renames it over `path`.
    static func writeAtomically(_ stream: BlobByteStream, to path: String, progress: ProgressBar) async throws {
        var generator = SystemRandomNumberGenerator()
        let temp = path + ".part-" + String(generator.next() as UInt64, radix: 36)
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(temp, [.writeOnly, .create, .exclusive], permissions: 0o644) } catch {
            throw CLIError.localIO(operation: "create", path: temp, errno: error)
        }
        let sink = FileDescriptorSink(fd: descriptor.rawValue, name: temp)
        var open = true
        do {
            for try await chunk in stream {
                try await sink.write(chunk)
                progress.add(chunk.count)
            }
            open = false
            do { try descriptor.close() } catch {
                throw CLIError.localIO(operation: "close", path: temp, errno: error)
            }
            do { try FileSystem.rename(temp, to: path) } catch {
                throw CLIError.localIO(operation: "rename", path: path, errno: error)
            }
        } catch {
            if open { try? descriptor.close() }
            _ = try? FileSystem.unlinkIfExists(temp)
            throw error
        }
    }
}
