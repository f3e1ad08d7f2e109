import Foundation

/// Streaming XXH64 (seed 0 by default).
///
/// An implementation of the 64-bit xxHash algorithm as described in the
/// public xxHash specification (XXH64). BlobStore uses it as a blob's ETag
/// and integrity checksum.
///
/// Feed input with any number of `update` calls, split anywhere; the result
/// of `finalize()` depends only on the concatenated bytes and the seed.
/// `finalize()` does not consume the state, so more input can be added
/// afterwards and `finalize()` called again.
///
/// The state is a plain value: four accumulators plus a 32-byte tail buffer
/// stored inline, so copying or creating a hasher never allocates.
public struct XXH64: Sendable {
    // MARK: Constants (from the specification)

    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// Size in bytes of one stripe (four 8-byte lanes).
    private static let stripeSize = 32

    // MARK: State

    private var acc1: UInt64
    private var acc2: UInt64
    private var acc3: UInt64
    private var acc4: UInt64
    private let seed: UInt64
    /// Total number of bytes fed so far.
    private var totalLength: UInt64 = 0
    /// Bytes of an incomplete stripe, kept inline (no heap allocation).
    private var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// How many bytes of `buffer` are in use (always `< 32` between calls).
    private var bufferedCount: Int = 0

    // MARK: Public API

    /// Creates a hasher with the given seed (0 by default).
    public init(seed: UInt64 = 0) {
        self.seed = seed
        acc1 = seed &+ Self.prime1 &+ Self.prime2
        acc2 = seed &+ Self.prime2
        acc3 = seed
        acc4 = seed &- Self.prime1
    }

    /// Feeds `bytes` into the hash.
    ///
    /// Whole 32-byte stripes are read straight from `bytes`; only a
    /// trailing partial stripe is copied into the internal buffer.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let count = bytes.count
        totalLength &+= UInt64(count)
        var offset = 0

        // Complete a pending partial stripe first.
        if bufferedCount > 0 {
            let take = min(Self.stripeSize - bufferedCount, count)
            let filled = bufferedCount
            withUnsafeMutableBytes(of: &buffer) { buf in
                buf.baseAddress!.advanced(by: filled)
                    .copyMemory(from: base, byteCount: take)
            }
            bufferedCount += take
            offset = take
            guard bufferedCount == Self.stripeSize else { return }
            acc1 = Self.round(acc1, UInt64(littleEndian: buffer.0))
            acc2 = Self.round(acc2, UInt64(littleEndian: buffer.1))
            acc3 = Self.round(acc3, UInt64(littleEndian: buffer.2))
            acc4 = Self.round(acc4, UInt64(littleEndian: buffer.3))
            bufferedCount = 0
        }

        // Whole stripes directly from the caller's memory.
        if count - offset >= Self.stripeSize {
            offset = Self.processStripes(
                base, from: offset, count: count,
                &acc1, &acc2, &acc3, &acc4)
        }

        // Keep the tail for later.
        let rest = count - offset
        if rest > 0 {
            withUnsafeMutableBytes(of: &buffer) { buf in
                buf.baseAddress!.copyMemory(from: base + offset, byteCount: rest)
            }
            bufferedCount = rest
        }
    }

    /// Feeds the bytes of an array into the hash.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds the bytes of a `Data` value into the hash.
    public mutating func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// Returns the hash of all bytes fed so far.
    ///
    /// Does not change the state: more bytes may be fed afterwards and
    /// `finalize()` called again.
    public func finalize() -> UInt64 {
        var acc: UInt64
        if totalLength >= UInt64(Self.stripeSize) {
            acc = Self.mergeAccumulators(acc1, acc2, acc3, acc4)
        } else {
            acc = seed &+ Self.prime5
        }
        acc &+= totalLength
        let pending = bufferedCount
        return withUnsafeBytes(of: buffer) { buf in
            Self.finish(acc, UnsafeRawBufferPointer(rebasing: buf[0..<pending]))
        }
    }

    /// One-shot XXH64 of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else {
            return finish(seed &+ prime5, UnsafeRawBufferPointer(start: nil, count: 0))
        }
        var acc: UInt64
        var offset = 0
        if count >= stripeSize {
            var a1 = seed &+ prime1 &+ prime2
            var a2 = seed &+ prime2
            var a3 = seed
            var a4 = seed &- prime1
            offset = processStripes(base, from: 0, count: count, &a1, &a2, &a3, &a4)
            acc = mergeAccumulators(a1, a2, a3, a4)
        } else {
            acc = seed &+ prime5
        }
        acc &+= UInt64(count)
        return finish(acc, UnsafeRawBufferPointer(start: base + offset, count: count - offset))
    }

    /// One-shot XXH64 of the bytes of `data`.
    public static func hash(_ data: Data, seed: UInt64 = 0) -> UInt64 {
        data.withUnsafeBytes { hash($0, seed: seed) }
    }

    // MARK: Algorithm steps

    @inline(__always)
    private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 {
        (x &<< r) | (x &>> (64 &- r))
    }

    /// One lane step: `acc = rotl(acc + lane * P2, 31) * P1`.
    @inline(__always)
    private static func round(_ acc: UInt64, _ lane: UInt64) -> UInt64 {
        rotl(acc &+ lane &* prime2, 31) &* prime1
    }

    /// Consumes every whole stripe of `base[offset..<count]`; returns the
    /// offset of the first unconsumed byte.
    @inline(__always)
    private static func processStripes(
        _ base: UnsafeRawPointer, from offset: Int, count: Int,
        _ a1: inout UInt64, _ a2: inout UInt64,
        _ a3: inout UInt64, _ a4: inout UInt64
    ) -> Int {
        var v1 = a1, v2 = a2, v3 = a3, v4 = a4
        var p = offset
        let limit = count - stripeSize
        while p <= limit {
            v1 = round(v1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self)))
            v2 = round(v2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p + 8, as: UInt64.self)))
            v3 = round(v3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p + 16, as: UInt64.self)))
            v4 = round(v4, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p + 24, as: UInt64.self)))
            p += stripeSize
        }
        a1 = v1; a2 = v2; a3 = v3; a4 = v4
        return p
    }

    @inline(__always)
    private static func mergeRound(_ acc: UInt64, _ v: UInt64) -> UInt64 {
        (acc ^ round(0, v)) &* prime1 &+ prime4
    }

    /// Converges the four accumulators into one (inputs of 32 bytes or more).
    @inline(__always)
    private static func mergeAccumulators(
        _ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64
    ) -> UInt64 {
        var acc = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
        acc = mergeRound(acc, v1)
        acc = mergeRound(acc, v2)
        acc = mergeRound(acc, v3)
        acc = mergeRound(acc, v4)
        return acc
    }

    /// Consumes the final `< 32` bytes and applies the avalanche.
    private static func finish(_ accIn: UInt64, _ tail: UnsafeRawBufferPointer) -> UInt64 {
        var acc = accIn
        if let base = tail.baseAddress {
            let count = tail.count
            var p = 0
            while p + 8 <= count {
                let lane = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
                acc ^= round(0, lane)
                acc = rotl(acc, 27) &* prime1 &+ prime4
                p += 8
            }
            if p + 4 <= count {
                let lane = UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt32.self)))
                acc ^= lane &* prime1
                acc = rotl(acc, 23) &* prime2 &+ prime3
                p += 4
            }
            while p < count {
                let byte = UInt64(base.load(fromByteOffset: p, as: UInt8.self))
                acc ^= byte &* prime5
                acc = rotl(acc, 11) &* prime1
                p += 1
            }
        }
        // Avalanche.
        acc ^= acc &>> 33
        acc &*= prime2
        acc ^= acc &>> 29
        acc &*= prime3
        acc ^= acc &>> 32
        return acc
    }
}
