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
            what is written to standard output without -o: the content.
            """,
        arguments: [ArgumentSpec("STORE/ID", help: "The store and the blob's identifier (split at the first '/').")],
        options: [
            OptionSpec("output", short: "o", .value(metavar: "FILE"), help: "Write to FILE (through a temporary file and a rename) instead of standard output."),
            OptionSpec("range", .value(metavar: "A-B"), help: "Only bytes A through B (inclusive, from 0); 'A-' to the end; '-N' the last N bytes."),
        ],
        examples: [
            "blob get photos/cats/tom.png > tom.png",
            "blob get photos/cats/tom.png -o tom.png",
            "blob get logs/today --range 0-1023 | less",
        ])

    let address: BlobAddress
    let output: String?
    let range: ByteRangeSpec?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        address = try BlobAddress.parse(arguments.positionals[0], command: Self.spec.name)
        let output = arguments.value("output")
        if let output, output.isEmpty { throw UsageError("'-o' needs a file name", command: Self.spec.name) }
        self.output = output == "-" ? nil : output
        range = try arguments.value("range").map { text throws(UsageError) in try ByteRangeSpec.parse(text, command: Self.spec.name) }
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.backend.store(address.store, create: false)
        var byteRange: Range<Int64>?
        if let range {
            let size = range.needsSize ? try await store.head(address.identifier).size : 0
            byteRange = range.resolved(size: size)
        }
        if let output, byteRange == nil {
            // The store's own download: temp file beside the target, renamed when complete.
            let size = try await store.head(address.identifier).size
            let progress = context.progress("get \(address) → \(output)", total: size, counting: false)
            let metadata: BlobMetadata
            do {
                metadata = try await store.download(address.identifier, to: URL(fileURLWithPath: output))
                progress.finish()
            } catch {
                progress.finish()
                throw error
            }
            try await report(metadata, bytes: metadata.size, context: context)
            return
        }
        let stream = try await store.stream(address.identifier, range: byteRange, chunkSize: 1 << 20)
        let count = stream.range.upperBound - stream.range.lowerBound
        let progress = context.progress("get \(address)", total: count)
        defer { progress.finish() }
        if let output {
            try await Self.writeAtomically(stream, to: output, progress: progress)
            progress.finish()
            try await report(stream.metadata, bytes: count, context: context)
        } else {
            for try await chunk in stream {
                try await context.console.output.write(chunk)
                progress.add(chunk.count)
            }
        }
    }

    private func report(_ metadata: BlobMetadata, bytes: Int64, context: CommandContext) async throws {
        guard let output else { return }
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
