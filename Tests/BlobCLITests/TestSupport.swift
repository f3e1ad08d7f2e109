import BlobCLI
import BlobStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one in-process `BlobCLI.run` printed.
struct CapturedRun {
    var status: Int32
    var output: Data
    var error: String
    var outputText: String { String(decoding: output, as: UTF8.self) }
}

/// Runs the command line in this process with buffers for standard output and error.
func runInProcess(
    _ arguments: [String], environment: [String: String] = ["XDG_RUNTIME_DIR": "/nonexistent-runtime"],
    input: Int32 = 0, daemon: DaemonConnector? = nil
) async -> CapturedRun {
    let output = CapturingSink(), error = CapturingSink()
    let console = Console(output: output, error: error, input: input)
    let status = await BlobCLI.run(["blob"] + arguments, environment: environment, console: console, daemon: daemon)
    return CapturedRun(status: status, output: output.data, error: error.text)
}

/// Runs the `blob` binary with `arguments` (no daemon socket from this process's environment), feeding
/// `input` through a pipe (optionally in two halves with a pause between them); see ``runProgram``.
func runBlob(
    _ arguments: [String], input: Data? = nil, pauseMidInput: Double = 0, environment extra: [String: String] = [:],
    directory: URL? = nil
) throws -> ProcessRun {
    guard let binary = BlobBinary.url else { throw BinaryMissing() }
    var environment = ProcessInfo.processInfo.environment
    environment["BLOB_SOCKET"] = nil
    environment["XDG_RUNTIME_DIR"] = "/nonexistent-runtime"
    for (key, value) in extra { environment[key] = value }
    return try runProgram(binary.path, arguments, input: input ?? Data(), pauseMidInput: pauseMidInput, replacingEnvironment: environment, directory: directory)
}

struct BinaryMissing: Error {}

/// A complete 1-bit greyscale PNG of `width`×`height` black pixels, a few hundred bytes: the store validates
/// an image's whole structure, CRCs included, so a header alone is no longer enough.
func pngHeader(width: UInt32, height: UInt32) -> Data {
    func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        return ~crc
    }
    func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] { be32(UInt32(body.count)) + Array(type.utf8) + body + be32(crc(Array(type.utf8) + body)) }
    // The rows are all zero bytes (filter 0, black pixels): one fixed-Huffman deflate block holding a
    // literal 0, then copies of 258 bytes at distance 1, then the last few zeros as literals.
    let rawCount = Int(height) * (1 + (Int(width) + 7) / 8)
    var deflate: [UInt8] = [], bitBuffer: UInt32 = 0, bitCount = 0
    func bits(_ value: UInt32, _ count: Int) {
        bitBuffer |= value << UInt32(bitCount)
        bitCount += count
        while bitCount >= 8 { deflate.append(UInt8(bitBuffer & 0xFF)); bitBuffer >>= 8; bitCount -= 8 }
    }
    func code(_ value: UInt32, _ count: Int) { // Huffman codes go most significant bit first
        bits((0..<count).reduce(0) { $0 | (value >> UInt32($1) & 1) << UInt32(count - 1 - $1) }, count)
    }
    bits(1, 1); bits(1, 2)  // final block, fixed codes
    code(0x30, 8)           // literal 0
    var left = rawCount - 1
    while left >= 258 { code(0xC5, 8); code(0, 5); left -= 258 }  // length 258 (code 285), distance 1
    for _ in 0..<left { code(0x30, 8) }
    code(0, 7)              // end of block
    if bitCount > 0 { deflate.append(UInt8(bitBuffer & 0xFF)) }
    var a: UInt32 = 1, b: UInt32 = 0
    for _ in 0..<rawCount { b = (b + a) % 65521 }  // Adler-32 of zeros: a stays 1
    let zlib = [0x78, 0x01] + deflate + be32(b << 16 | a)
    let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    return Data(signature + chunk("IHDR", be32(width) + be32(height) + [1, 0, 0, 0, 0]) + chunk("IDAT", zlib) + chunk("IEND", []))
}

/// A backend on in-memory stores: shows that commands run against any ``BlobBackend`` (as the daemon's will).
final class MemoryBackend: BlobBackend, @unchecked Sendable {
    private let lock = NSLock()
    private var memoryStores: [String: InMemoryBlobStore] = [:]
    /// Run after `changes` has subscribed (to make changes the watch will see); events stop after `eventLimit`.
    let onWatch: (@Sendable (InMemoryBlobStore) async throws -> Void)?
    let eventLimit: Int

    init(eventLimit: Int = .max, onWatch: (@Sendable (InMemoryBlobStore) async throws -> Void)? = nil) {
        self.eventLimit = eventLimit
        self.onWatch = onWatch
    }

    var location: String { "memory" }

    func memoryStore(_ name: String, create: Bool) throws -> InMemoryBlobStore {
        lock.lock()
        defer { lock.unlock() }
        if let store = memoryStores[name] { return store }
        guard create else { throw CLIError.storeNotFound(store: name, location: location) }
        let store = try InMemoryBlobStore(name: name)
        memoryStores[name] = store
        return store
    }

    func store(_ name: String, create: Bool) async throws -> any BlobStoring { try memoryStore(name, create: create) }

    func stores() async throws -> [StoreSummary] {
        let all = lock.withLock { memoryStores }
        var result: [StoreSummary] = []
        for (name, store) in all.sorted(by: { $0.key < $1.key }) {
            result.append(StoreSummary(name: name, statistics: try await store.statistics()))
        }
        return result
    }

    func verify(_ store: String?) async throws -> [StoreVerification] { [] }

    func changes(_ store: String?, status: @escaping @Sendable (WatchStatus) -> Void) async throws -> AsyncStream<BlobChange> {
        let memory = try memoryStore(store ?? "watched", create: true)
        let source = memory.changes()
        let limit = eventLimit
        let (stream, continuation) = AsyncStream<BlobChange>.makeStream()
        let forward = Task {
            var count = 0
            for await change in source {
                continuation.yield(change)
                count += 1
                if count >= limit { break }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in forward.cancel() }
        if let onWatch { Task { try await onWatch(memory) } }
        return stream
    }
}
