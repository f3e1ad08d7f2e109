/// HMAC-SHA256 (RFC 2104), streaming: the inner hash is fed as bytes arrive, the outer hash at the end.
///
/// Signature V4 derives its signing key through four HMACs and signs the string to sign with a fifth.
package struct HMACSHA256: Sendable {
    private var inner: SHA256
    private var outer: SHA256

    /// An HMAC keyed with `key`; keys longer than a block are hashed first, as RFC 2104 says.
    package init(key: UnsafeRawBufferPointer) {
        var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &block) { keyBlock in
            if key.count > SHA256.blockByteCount {
                SHA256.hash(key).withUnsafeBytes { keyBlock.copyMemory(from: $0) }
            } else if !key.isEmpty {
                keyBlock.copyMemory(from: key)
            }
        }
        inner = SHA256()
        outer = SHA256()
        var padded = block
        withUnsafeMutableBytes(of: &padded) { pad in
            for index in pad.indices { pad[index] ^= 0x36 }
            inner.update(UnsafeRawBufferPointer(pad))
        }
        padded = block
        withUnsafeMutableBytes(of: &padded) { pad in
            for index in pad.indices { pad[index] ^= 0x5c }
            outer.update(UnsafeRawBufferPointer(pad))
        }
    }

    /// An HMAC keyed with `key`.
    package init(key: some Sequence<UInt8>) {
        let bytes = Array(key)
        self = bytes.withUnsafeBytes { HMACSHA256(key: $0) }
    }

    /// An HMAC keyed with a digest (a derived Signature V4 key).
    package init(key: SHA256Digest) {
        self = key.withUnsafeBytes { HMACSHA256(key: $0) }
    }

    /// Authenticates `bytes`.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        inner.update(bytes)
    }

    /// Authenticates `bytes`.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        inner.update(bytes)
    }

    /// Authenticates the UTF-8 of `text`.
    package mutating func update(_ text: String) {
        inner.update(text)
    }

    /// The authentication code. The HMAC is spent afterwards.
    package mutating func finalize() -> SHA256Digest {
        let innerDigest = inner.finalize()
        innerDigest.withUnsafeBytes { outer.update($0) }
        return outer.finalize()
    }

    /// The authentication code of `message` under `key`, in one call.
    package static func authenticationCode(for message: some Sequence<UInt8>, key: some Sequence<UInt8>) -> SHA256Digest {
        var hmac = HMACSHA256(key: key)
        hmac.update(message)
        return hmac.finalize()
    }

    /// The authentication code of the UTF-8 of `message` under `key`, in one call.
    package static func authenticationCode(for message: String, key: SHA256Digest) -> SHA256Digest {
        var hmac = HMACSHA256(key: key)
        hmac.update(message)
        return hmac.finalize()
    }
}
