import Synchronization

/// Reads mark recency here, for eviction's CLOCK (``CacheCatalog``): one bit per slot of a fixed
/// table, the slot chosen by a hash of the identifier. A read sets its bit (a relaxed load, and a
/// relaxed `or` only when the bit was clear, so a hot blob's reads do not fight over the cache line);
/// eviction's hand reads and clears it. Nothing is written to disk, and nothing survives a restart.
///
/// Two identifiers that share a slot share a bit: a cold blob may get a second chance it did not
/// earn, never the reverse. With 2^16 bits that errs rarely enough for an approximation of LRU.
///
/// Any thread may call it (atomics only).
final class RecencyBits: Sendable {
    private final class Word: Sendable {
        let bits = Atomic<UInt64>(0)
    }

    static let wordCount = 1024
    private let words: [Word] = (0..<RecencyBits.wordCount).map { _ in Word() }

    /// The slot of `identifier` (a hash of its bytes).
    static func slot(of identifier: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var copy = identifier
        copy.withUTF8 { bytes in
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 29)) & (wordCount * 64 - 1)
    }

    /// Marks the blob in `slot` as recently used.
    @inline(__always)
    func mark(_ slot: Int) {
        let word = words[slot >> 6]
        let bit = UInt64(1) << UInt64(slot & 63)
        if word.bits.load(ordering: .relaxed) & bit == 0 { word.bits.bitwiseOr(bit, ordering: .relaxed) }
    }

    /// Whether `slot` was marked since the last call for it; clears the mark (the hand's second chance).
    func takeMark(_ slot: Int) -> Bool {
        let word = words[slot >> 6]
        let bit = UInt64(1) << UInt64(slot & 63)
        guard word.bits.load(ordering: .relaxed) & bit != 0 else { return false }
        return word.bits.bitwiseAnd(~bit, ordering: .relaxed).oldValue & bit != 0
    }
}
