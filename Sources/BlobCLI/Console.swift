import BlobSystem
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Somewhere output goes: standard output or error, or a buffer in tests.
package protocol OutputSink: Sendable {
    /// Writes all of `data`; throws ``CLIError/localIO(operation:path:errno:)`` if it cannot.
    func write(_ data: Data) async throws
}

/// Writes to a file descriptor from a serial queue of its own, so a blocking `write(2)` (a full pipe,
/// a slow terminal) never occupies a thread of the Swift concurrency pool.
package final class FileDescriptorSink: OutputSink {
    private let descriptor: FileDescriptor
    private let name: String
    private let queue: DispatchQueue

    package init(fd: Int32, name: String) {
        descriptor = FileDescriptor(rawValue: fd)
        self.name = name
        queue = DispatchQueue(label: "blob.output.\(fd)")
    }

    package func write(_ data: Data) async throws {
        guard !data.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async { [descriptor, name] in
                do {
                    try data.withUnsafeBytes { try descriptor.writeAll($0) }
                    continuation.resume()
                } catch let error as Errno {
                    continuation.resume(throwing: CLIError.localIO(operation: "write", path: name, errno: error))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// Collects output in memory (tests).
package final class CapturingSink: OutputSink {
    private let buffer = Locked(Data())
    package init() {}
    package func write(_ data: Data) async throws { buffer.withLock { $0.append(data) } }
    /// Everything written so far.
    package var data: Data { buffer.withLock { $0 } }
    /// Everything written so far, as UTF-8 text.
    package var text: String { String(decoding: data, as: UTF8.self) }
}

/// Where a command reads and writes: standard input, output and error, and what they are connected to.
package struct Console: Sendable {
    package var output: any OutputSink
    package var error: any OutputSink
    /// Standard input's descriptor (read for `put` without a file).
    package var input: Int32
    /// Whether standard error is a terminal: the progress bar is shown only then.
    package var errorIsTerminal: Bool
    /// Whether standard output is a terminal (`get` refuses to write binary content to one).
    package var outputIsTerminal: Bool
    /// Whether standard input is a terminal: someone may be typing (`put` shows no progress then;
    /// `rm -r` may ask for confirmation only then).
    package var inputIsTerminal: Bool

    package init(
        output: any OutputSink, error: any OutputSink, input: Int32 = 0, errorIsTerminal: Bool = false,
        outputIsTerminal: Bool = false, inputIsTerminal: Bool = false
    ) {
        self.output = output
        self.error = error
        self.input = input
        self.errorIsTerminal = errorIsTerminal
        self.outputIsTerminal = outputIsTerminal
        self.inputIsTerminal = inputIsTerminal
    }

    /// The process's own standard streams.
    package static func standard() -> Console {
        Console(
            output: FileDescriptorSink(fd: 1, name: "standard output"),
            error: FileDescriptorSink(fd: 2, name: "standard error"),
            input: 0, errorIsTerminal: isatty(2) == 1, outputIsTerminal: isatty(1) == 1, inputIsTerminal: isatty(0) == 1)
    }

    /// Writes `text` to standard output, adding a newline unless it ends with one.
    package func print(_ text: String) async throws {
        try await output.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    /// Writes `text` to standard error, adding a newline unless it ends with one; never fails.
    package func printError(_ text: String) async {
        try? await error.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    /// Reads one line from standard input (without its newline), or `nil` at end of input; the
    /// blocking reads (a byte at a time, so nothing after the line is taken) run on a queue of their own.
    func readLine() async throws -> String? {
        let descriptor = FileDescriptor(rawValue: input)
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "blob.input.line").async {
                var bytes: [UInt8] = []
                var byte: UInt8 = 0
                var ended = false
                do {
                    while true {
                        let count = try withUnsafeMutableBytes(of: &byte) { try descriptor.read(into: $0) }
                        if count == 0 {
                            ended = true
                            break
                        }
                        if byte == 0x0A { break }
                        bytes.append(byte)
                    }
                    continuation.resume(returning: ended && bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self))
                } catch let error as Errno {
                    continuation.resume(throwing: CLIError.localIO(operation: "read", path: "standard input", errno: error))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// Reads a file descriptor in chunks as an `AsyncSequence`, each `read(2)` on a queue of its own.
///
/// Memory use is one chunk at a time, so `put` from standard input streams content of any size.
struct DescriptorChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let descriptor: FileDescriptor
    /// Names the source in errors (`standard input`, a path).
    let name: String
    let chunkSize: Int
    /// Called with the size of each read as it completes (progress), on the reading queue.
    let onChunk: @Sendable (Int) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: DescriptorChunks
        let queue: DispatchQueue
        var finished = false

        mutating func next() async throws -> Data? {
            if finished { return nil }
            let source = self.source
            let chunk: Data = try await withCheckedThrowingContinuation { continuation in
                queue.async {
                    var data = Data(count: source.chunkSize)
                    do {
                        // Fill the chunk (a pipe returns what is there); stop early only at end of input.
                        var filled = 0
                        while filled < data.count {
                            let count = try data.withUnsafeMutableBytes { buffer in
                                try source.descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                            }
                            if count == 0 { break }
                            filled += count
                            source.onChunk(count)
                        }
                        data.count = filled
                        continuation.resume(returning: data)
                    } catch let error as Errno {
                        continuation.resume(throwing: CLIError.localIO(operation: "read", path: source.name, errno: error))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            if chunk.count < source.chunkSize { finished = true }
            if chunk.isEmpty { return nil }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self, queue: DispatchQueue(label: "blob.input"))
    }
}
