/// SHA-256 (FIPS 180-4), streaming: ``update(_:)`` any number of times, then ``finalize()``.
///
/// Written here because the package takes no dependencies and Signature V4 needs it for every
/// request (the payload hash, the canonical request, HMAC). Whole 64-byte blocks are compressed
/// straight from the caller's buffer; only a tail shorter than a block is copied, into inline
/// storage, so hashing allocates nothing.
///
/// A value type: each copy hashes on its own; one owner at a time mutates it.
package struct SHA256: Sendable {
    /// The byte count of one block.
    package static let blockByteCount = 64

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// Bytes of a block not yet compressed (the first `pendingCount` are valid).
    private var pending: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var pendingCount = 0
    /// Bytes hashed so far; the padding records it in bits, modulo 2⁶⁴.
    private var totalByteCount: UInt64 = 0

    /// A hash of nothing yet.
    package init() {}

    /// The digest of `bytes`, in one call.
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `bytes`, in one call.
    package static func hash(_ bytes: some Sequence<UInt8>) -> SHA256Digest {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of the UTF-8 of `text`.
    package static func hash(_ text: String) -> SHA256Digest {
        var hasher = SHA256()
        hasher.update(text)
        return hasher.finalize()
    }

    /// Hashes the UTF-8 of `text`.
    package mutating func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Hashes `bytes`; contiguous collections go through their buffer, others through a small copy.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if handled != nil { return }
        // A rare path (a lazy sequence, say): stage 64 bytes at a time on the stack.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.blockByteCount) { stage in
            var count = 0
            for byte in bytes {
                stage[count] = byte
                count += 1
                if count == Self.blockByteCount {
                    update(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: stage[0..<count])))
                    count = 0
                }
            }
            update(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: stage[0..<count])))
        }
    }

    /// Hashes `bytes`.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var remaining = bytes.baseAddress, !bytes.isEmpty else { return }
        var remainingCount = bytes.count
        totalByteCount &+= UInt64(truncatingIfNeeded: remainingCount)
        if pendingCount > 0 {
            let taken = min(Self.blockByteCount - pendingCount, remainingCount)
            let filled = pendingCount
            withUnsafeMutableBytes(of: &pending) { block in
                (block.baseAddress! + filled).copyMemory(from: remaining, byteCount: taken)
            }
            pendingCount += taken
            remaining += taken
            remainingCount -= taken
            guard pendingCount == Self.blockByteCount else { return }
            var block = pending
            withUnsafeBytes(of: &block) { compress($0.baseAddress!, blockCount: 1) }
            pendingCount = 0
        }
        let wholeBlocks = remainingCount / Self.blockByteCount
        if wholeBlocks > 0 {
            compress(remaining, blockCount: wholeBlocks)
            remaining += wholeBlocks * Self.blockByteCount
            remainingCount -= wholeBlocks * Self.blockByteCount
        }
        if remainingCount > 0 {
            withUnsafeMutableBytes(of: &pending) { block in
                block.baseAddress!.copyMemory(from: remaining, byteCount: remainingCount)
            }
            pendingCount = remainingCount
        }
    }

    /// Pads, compresses the last block(s) and returns the digest. The hasher is spent afterwards:
    /// start a new one for another message.
    package mutating func finalize() -> SHA256Digest {
        let bitCount = totalByteCount &* 8
        // Padding: 0x80, zeros up to 56 mod 64, then the length in bits, big-endian.
        var padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        let padCount = pendingCount < 56 ? 56 - pendingCount : 120 - pendingCount
        withUnsafeMutableBytes(of: &padding) { pad in
            pad[0] = 0x80
            withUnsafeBytes(of: bitCount.bigEndian) { length in
                UnsafeMutableRawBufferPointer(rebasing: pad[padCount..<(padCount + 8)]).copyMemory(from: length)
            }
            // update counts the padding into totalByteCount too; the length was read before.
            update(UnsafeRawBufferPointer(rebasing: pad[0..<(padCount + 8)]))
        }
        return SHA256Digest(words: state)
    }

    /// Compresses `blockCount` 64-byte blocks starting at `blocks` into the state.
    private mutating func compress(_ blocks: UnsafeRawPointer, blockCount: Int) {
        var h0 = state.0, h1 = state.1, h2 = state.2, h3 = state.3
        var h4 = state.4, h5 = state.5, h6 = state.6, h7 = state.7
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            SHA256RoundConstants.values.withUnsafeBufferPointer { k in
                for blockIndex in 0..<blockCount {
                    let block = blocks + blockIndex &* 64
                    for t in 0..<16 {
                        schedule[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self))
                    }
                    for t in 16..<64 {
                        let w15 = schedule[t &- 15], w2 = schedule[t &- 2]
                        let s0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 &>> 3)
                        let s1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 &>> 10)
                        schedule[t] = schedule[t &- 16] &+ s0 &+ schedule[t &- 7] &+ s1
                    }
                    var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
                    for t in 0..<64 {
                        let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                        let choice = (e & f) ^ (~e & g)
                        let temp1 = h &+ s1 &+ choice &+ k[t] &+ schedule[t]
                        let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let temp2 = s0 &+ majority
                        h = g
                        g = f
                        f = e
                        e = d &+ temp1
                        d = c
                        c = b
                        b = a
                        a = temp1 &+ temp2
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                    h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                }
            }
        }
        state = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self &>> count) | (self &<< (32 &- count))
    }
}

/// The 64 round constants: the first 32 bits of the fractional parts of the cube roots of the
/// first 64 primes (FIPS 180-4 §4.2.2).
private enum SHA256RoundConstants {
    static let values: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}
