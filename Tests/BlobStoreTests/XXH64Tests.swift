import Foundation
import Testing
import BlobStore

/// Reference values produced with Python's `xxhash` package (4.1.0):
/// `xxhash.xxh64(data, seed=...).intdigest()`; those around stripe boundaries (65–129) and the
/// large ones (64 KiB, 1 MiB, 1 MiB + 7) with the reference C library (`XXH64()` of libxxhash 0.8.1),
/// which agrees with Python on every length listed.
@Suite("XXH64")
struct XXH64Tests {
    /// Deterministic pattern: byte i = (i * 31 + 7) & 0xff.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    static func oneShot(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { XXH64.hash($0, seed: seed) }
    }

    static let patternVectors: [(length: Int, expected: UInt64)] = [
        (0, 0xEF46_DB37_51D8_E999),
        (1, 0xA96C_7F0C_E858_BBB7),
        (4, 0xC60D_15B1_E3FF_8F04),
        (8, 0x3DA5_C7AA_2696_83E0),
        (31, 0x4A74_F3A1_A39A_D4A1),
        (32, 0x8D57_D6A4_671C_C43D),
        (33, 0x62C9_FD21_ED85_7664),
        (63, 0x5C32_0A0D_2707_057F),
        (64, 0x7BBA_BBC4_5729_D17E),
        (65, 0xF398_0C34_BAE6_5DC1),
        (95, 0x90F6_CB6D_1DB4_1380),
        (96, 0x1A4B_2073_8505_1B55),
        (97, 0xB801_6EEF_F392_BE5D),
        (100, 0xEFA0_AD2D_3E70_C151),
        (127, 0x4822_F4E6_7F60_EA91),
        (128, 0x725A_5B9B_3BED_FE94),
        (129, 0x28FC_8362_6436_27D7),
        (1000, 0x9959_4F48_2804_3D35),
        (65536, 0xCE06_6073_92C5_113F),
        (100_000, 0x3AC9_CBC5_A9B7_F843),
        (1 << 20, 0x292C_C494_F5A2_E5EC),
        ((1 << 20) + 7, 0xD9DF_B22D_5513_15E1),
    ]

    @Test("pattern reference vectors (one-shot, streaming, Data)", arguments: patternVectors)
    func patternVector(length: Int, expected: UInt64) {
        let bytes = Self.pattern(length)
        #expect(Self.oneShot(bytes) == expected)
        #expect(XXH64.hash(Data(bytes)) == expected)
        var hasher = XXH64()
        hasher.update(bytes)
        #expect(hasher.finalize() == expected)
    }

    @Test("empty input")
    func empty() {
        #expect(XXH64().finalize() == 0xEF46_DB37_51D8_E999)
        #expect(XXH64.hash(Data()) == 0xEF46_DB37_51D8_E999)
        var hasher = XXH64()
        hasher.update([UInt8]())
        hasher.update(Data())
        #expect(hasher.finalize() == 0xEF46_DB37_51D8_E999)
    }

    @Test("ASCII strings")
    func ascii() {
        #expect(XXH64.hash(Data("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(XXH64.hash(Data("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(XXH64.hash(Data("abc".utf8), seed: 1) == 0xBEA9_CA81_9932_8908)
    }

    static let seededVectors: [(length: Int, expected: UInt64)] = [
        (0, 0xC434_9FC9_3C01_0000),
        (3, 0x5ACB_303E_7813_3C22),
        (100, 0xBC7A_B33B_E752_8C18),
        (1000, 0xDA71_7F74_1F39_9F3F),
    ]

    @Test("non-zero seed 0x9E3779B97F4A7C15", arguments: seededVectors)
    func seeded(length: Int, expected: UInt64) {
        let seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bytes = Self.pattern(length)
        #expect(Self.oneShot(bytes, seed: seed) == expected)
        var hasher = XXH64(seed: seed)
        for byte in bytes { hasher.update([byte]) }
        #expect(hasher.finalize() == expected)
    }

    @Test("streaming split at every position of 100 bytes equals one-shot")
    func everySplit() {
        let bytes = Self.pattern(100)
        let expected = Self.oneShot(bytes)
        #expect(expected == 0xEFA0_AD2D_3E70_C151)
        for i in 0...bytes.count {
            var hasher = XXH64()
            hasher.update(Array(bytes[..<i]))
            hasher.update(Array(bytes[i...]))
            #expect(hasher.finalize() == expected, "split at \(i)")
        }
        // Three pieces: every (i, j) pair.
        for i in 0...bytes.count {
            for j in i...bytes.count {
                var hasher = XXH64()
                hasher.update(Array(bytes[..<i]))
                hasher.update(Array(bytes[i..<j]))
                hasher.update(Array(bytes[j...]))
                if hasher.finalize() != expected {
                    Issue.record("split at \(i), \(j)")
                }
            }
        }
    }

    @Test("random splits of 100_000 bytes equal one-shot")
    func randomSplits() {
        let bytes = Self.pattern(100_000)
        let expected: UInt64 = 0x3AC9_CBC5_A9B7_F843
        var rng = SplitMix64(seed: 42)
        for round in 0..<50 {
            var hasher = XXH64()
            var offset = 0
            // Mix of small (partial-stripe) and large chunks.
            let maxChunk = round.isMultiple(of: 2) ? 70 : 5_000
            bytes.withUnsafeBytes { raw in
                while offset < raw.count {
                    let n = min(Int.random(in: 0...maxChunk, using: &rng), raw.count - offset)
                    hasher.update(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + n]))
                    offset += n
                }
            }
            #expect(hasher.finalize() == expected, "round \(round)")
        }
    }

    @Test("finalize does not consume the state")
    func finalizeIsRepeatable() {
        let bytes = Self.pattern(1000)
        for upTo in stride(from: 0, through: bytes.count, by: 37) {
            var hasher = XXH64()
            hasher.update(Array(bytes[..<upTo]))
            #expect(hasher.finalize() == hasher.finalize())
            #expect(hasher.finalize() == Self.oneShot(Array(bytes[..<upTo])))
        }
        // Interleave finalize with further updates.
        var incremental = XXH64()
        var fed = 0
        for step in [1, 3, 31, 1, 64, 100, 300, 500] {
            incremental.update(Array(bytes[fed..<fed + step]))
            fed += step
            #expect(incremental.finalize() == Self.oneShot(Array(bytes[..<fed])))
        }
        #expect(fed == 1000)
        #expect(incremental.finalize() == 0x9959_4F48_2804_3D35)
    }

    @Test("1 MiB + 7 at every alignment, one-shot and streamed in pieces that start unaligned")
    func largeUnaligned() {
        let bytes = Self.pattern((1 << 20) + 7)
        let expected: UInt64 = 0xD9DF_B22D_5513_15E1
        for shift in 1..<16 {
            let padded = [UInt8](repeating: 0x55, count: shift) + bytes
            padded.withUnsafeBytes { raw in
                let input = UnsafeRawBufferPointer(rebasing: raw[shift...])
                #expect(XXH64.hash(input) == expected, "shift \(shift)")
                // Pieces of 64 KiB + shift: every piece after the first starts at a different misalignment.
                var hasher = XXH64()
                var offset = 0
                while offset < input.count {
                    let end = min(offset + 65536 + shift, input.count)
                    hasher.update(UnsafeRawBufferPointer(rebasing: input[offset..<end]))
                    offset = end
                }
                #expect(hasher.finalize() == expected, "streamed, shift \(shift)")
            }
        }
    }

    @Test("unaligned input start gives the same result")
    func unaligned() {
        let bytes = Self.pattern(1000)
        let expected: UInt64 = 0x9959_4F48_2804_3D35
        for shift in 0..<8 {
            let padded = [UInt8](repeating: 0xAA, count: shift) + bytes
            let result = padded.withUnsafeBytes { raw in
                XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[shift...]))
            }
            #expect(result == expected, "shift \(shift)")
        }
    }
}
