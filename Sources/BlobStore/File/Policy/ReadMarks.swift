/// What a read does for cache mode, on every read path (queued, cached, blocking, listing): refuses a
/// version that has expired (one comparison, and a clock read only for a version that has an expiry),
/// and marks the blob as recently used while eviction needs to know (``RecencyBits``).
///
/// Owned by the store's engine and shared by its read paths; immutable apart from its atomics.
final class ReadMarks: Sendable {
    let clock: StoreClock
    let recency = RecencyBits()
    /// Set while the store's policy has a limit: only then do reads mark recency.
    let marking = AtomicFlag(false)

    init(clock: StoreClock) { self.clock = clock }

    /// Whether `header`'s version has expired by now.
    @inline(__always)
    func expired(_ header: BlobHeader) -> Bool {
        header.isExpired(atNanoseconds: clock.nowNanoseconds())
    }

    /// Notes a read of `identifier` (cheap; nothing when the policy has no limit).
    @inline(__always)
    func read(_ identifier: String) {
        guard marking.load(ordering: .relaxed) else { return }
        recency.mark(RecencyBits.slot(of: identifier))
    }

    /// `blob` unless its version has expired (then its descriptor is closed and the answer is `nil`);
    /// a served version is marked as read.
    func served(_ blob: OpenedBlob) -> OpenedBlob? {
        if expired(blob.header) {
            try? blob.descriptor.close()
            return nil
        }
        read(blob.header.identifier)
        return blob
    }
}
