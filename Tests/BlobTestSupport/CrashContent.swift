import BlobStore
import Foundation

/// Content that proves it is complete: a header naming who wrote it, and a trailing XXH64 of the rest.
///
/// Layout (little-endian) for sizes ≥ 40: `BSCR`, writer (UInt16), identifier index (UInt16),
/// sequence (UInt64), total length (UInt64), random bytes, XXH64 of everything before the last 8 bytes.
/// Smaller blobs are random bytes only; they are recognised by their XXH64 among the versions sent.
package enum CrashContent {
    /// Bytes before the random part.
    package static let headerSize = 24
    /// The smallest size that carries the header and checksum.
    package static let minimumSelfChecking = 40

    /// A version of `size` bytes from `writer` for identifier `idIndex`, random bytes from `rng`.
    package static func make(size: Int, writer: Int, idIndex: Int, sequence: UInt64, rng: inout SplitMix64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                raw.storeBytes(of: rng.next().littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < raw.count {
                raw[offset] = UInt8(truncatingIfNeeded: rng.next())
                offset += 1
            }
        }
        guard size >= minimumSelfChecking else { return bytes }
        bytes.withUnsafeMutableBytes { raw in
            for (offset, byte) in "BSCR".utf8.enumerated() { raw[offset] = byte }
            raw.storeBytes(of: UInt16(writer).littleEndian, toByteOffset: 4, as: UInt16.self)
            raw.storeBytes(of: UInt16(idIndex).littleEndian, toByteOffset: 6, as: UInt16.self)
            raw.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: UInt64(size).littleEndian, toByteOffset: 16, as: UInt64.self)
            let sum = XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[..<(size - 8)]))
            raw.storeBytes(of: sum.littleEndian, toByteOffset: size - 8, as: UInt64.self)
        }
        return bytes
    }

    /// The XXH64 of `bytes` (an ETag's value).
    package static func hash(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { XXH64.hash($0) } }

    /// Why `bytes` is not a complete version, or nil when it checks out (small blobs always do).
    package static func problem(in bytes: [UInt8], idIndex: Int) -> String? {
        guard bytes.count >= minimumSelfChecking else { return nil }
        return bytes.withUnsafeBytes { raw -> String? in
            guard Array(raw[0..<4]) == Array("BSCR".utf8) else { return "no BSCR magic (foreign or torn content)" }
            let length = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            guard length == UInt64(bytes.count) else { return "embedded length \(length) but \(bytes.count) bytes (torn)" }
            let index = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
            guard index == idIndex else { return "content written for identifier #\(index), found under #\(idIndex)" }
            let stored = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
            let sum = XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[..<(bytes.count - 8)]))
            return stored == sum ? nil : "embedded checksum mismatch (torn content)"
        }
    }

    /// A size in 1 B ... 256 KiB: 10 % tiny (1–39 B), the rest log-uniform from 40 B.
    package static func randomSize(_ rng: inout SplitMix64) -> Int {
        if rng.next() % 10 == 0 { return Int(rng.next() % 39) + 1 }
        let exponent = Double(rng.next() % 1_000_000) / 1_000_000 * log2(262_144.0 / 40.0)
        return min(262_144, Int(40 * pow(2, exponent)))
    }
}
