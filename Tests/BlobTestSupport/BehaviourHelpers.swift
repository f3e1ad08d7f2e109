import BlobStore
import Foundation
import Testing

// Helpers shared by the behavioural suite. Nothing here depends on a particular store.

/// Deterministic pseudo-random bytes (``SplitMix64``), so failures reproduce.
package func pseudoRandomBytes(_ count: Int, seed: UInt64) -> Data {
    var generator = SplitMix64(seed: seed)
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + 8)
    while bytes.count < count { withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) } }
    return Data(bytes.prefix(count))
}

/// The XXH64-derived ETag a store must give `data`.
package func expectedETag(_ data: Data) -> ETag { ETag(checksum: XXH64.hash(data)) }

/// CRC-32 (ISO-HDLC), as PNG chunks carry it.
package func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
    }
    return ~crc
}

/// A minimal complete PNG: signature, IHDR (1-bit greyscale, `width` × `height`), one IDAT holding the
/// all-black rows as stored (uncompressed) deflate blocks in a zlib stream, and IEND.
package func minimalPNG(width: UInt32, height: UInt32) -> Data {
    func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + body
        return bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed))
    }
    let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    let ihdr = bigEndian(width) + bigEndian(height) + [1, 0, 0, 0, 0]
    // Each row: filter byte 0, then width bits rounded up to bytes.
    let raw = [UInt8](repeating: 0, count: Int(height) * (1 + (Int(width) + 7) / 8))
    var zlib: [UInt8] = [0x78, 0x01]
    var at = 0
    repeat {
        let count = min(65535, raw.count - at)
        let final: UInt8 = at + count == raw.count ? 1 : 0
        zlib += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8(~count >> 8 & 0xFF)]
        zlib += raw[at..<at + count]
        at += count
    } while at < raw.count
    var a: UInt32 = 1, b: UInt32 = 0
    for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
    zlib += bigEndian(b << 16 | a)
    return Data(signature + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", []))
}

/// Reads a whole stream.
package func collect(_ stream: BlobByteStream) async throws -> (data: Data, chunkSizes: [Int]) {
    var data = Data()
    var sizes: [Int] = []
    for try await chunk in stream {
        data.append(chunk)
        sizes.append(chunk.count)
    }
    return (data, sizes)
}

/// An `AsyncStream` that yields `chunks` and finishes.
package func chunkStream(_ chunks: [Data]) -> AsyncStream<Data> {
    AsyncStream { continuation in
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish()
    }
}

/// The error a failing chunk source throws.
package struct ChunkSourceFailure: Error, Equatable {
    /// The failure.
    package init() {}
}

/// An `AsyncThrowingStream` that yields `chunks`, then throws ``ChunkSourceFailure``.
package func failingChunkStream(_ chunks: [Data]) -> AsyncThrowingStream<Data, any Error> {
    AsyncThrowingStream { continuation in
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish(throwing: ChunkSourceFailure())
    }
}

/// Identifiers in UTF-8 byte order (what every store's listing uses).
package func byteOrdered(_ identifiers: [String]) -> [String] {
    identifiers.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
}

/// Identifiers as byte arrays, so that canonically equivalent strings stay distinct in comparisons.
package func utf8Bytes(_ identifiers: [String]) -> [[UInt8]] { identifiers.map { Array($0.utf8) } }

/// Sleeps long enough that the next write gets a later modification time on any store.
package func tick() async throws { try await Task.sleep(for: .milliseconds(3)) }

/// `nil` when the identifier lists are byte-for-byte equal, else a short account of the first difference
/// (so that a failure on thousands of identifiers prints one line, not all of them).
package func firstDifference(_ actual: [String], _ expected: [String]) -> String? {
    let a = utf8Bytes(actual), e = utf8Bytes(expected)
    if a == e { return nil }
    let index = (0..<min(a.count, e.count)).first { a[$0] != e[$0] } ?? min(a.count, e.count)
    func show(_ list: [String], _ i: Int) -> String { i < list.count ? "'\(list[i].unicodeScalars.map { $0.escaped(asASCII: true) }.joined())'" : "(end)" }
    return "\(a.count) items, expected \(e.count); first difference at \(index): \(show(actual, index)) vs expected \(show(expected, index))"
}
