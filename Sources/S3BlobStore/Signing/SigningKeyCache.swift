internal import BlobSystem

/// The last signing key a signer derived, with what it was derived from: the key changes once a day
/// (or with the credentials), and deriving it costs four HMACs on every request otherwise.
///
/// Shared by the copies of one ``SignatureV4`` (a struct whose copies sign from many threads); the
/// entry is guarded by the mutex.
final class SigningKeyCache: Sendable {
    /// What a signing key is derived from.
    struct Scope: Hashable, Sendable {
        var dateStamp: String
        /// The whole credentials (their descriptions and mirrors never show the secret).
        var credentials: AWSCredentials
        var region: String
        var service: String
    }

    private let entry = Locked<(scope: Scope, key: SHA256Digest)?>(nil)

    /// The key for `scope`: the cached one if it was derived from the same scope, else `derive()`'s,
    /// which then replaces it.
    func key(for scope: Scope, derive: () -> SHA256Digest) -> SHA256Digest {
        if let cached = entry.withLock({ $0 }), cached.scope == scope { return cached.key }
        let key = derive()
        entry.withLock { $0 = (scope, key) }
        return key
    }
}
