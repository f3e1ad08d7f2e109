/// Conditions (create-only, ETag match) checked against what is stored: early by a conditional put
/// before it writes its content, and again atomically inside the commit's barrier.
extension WriteCondition {
    /// Throws ``BlobStoreError/preconditionFailed(store:identifier:expected:actual:)`` unless the
    /// condition holds for `existing`, the stored version of `identifier` in `store`.
    func check(against existing: ExistingBlob, store: String, identifier: String) throws {
        let current: ETag?
        if case .present(let header) = existing { current = ETag(checksum: header.checksum) } else { current = nil }
        switch self {
        case .none:
            return
        case .ifNoneMatch:
            // A damaged or misplaced file is no version of this blob: a put replaces it.
            if case .present = existing {} else { return }
            throw BlobStoreError.preconditionFailed(store: store, identifier: identifier, expected: nil, actual: current)
        case .ifMatch(let expected):
            if current == expected { return }
            throw BlobStoreError.preconditionFailed(store: store, identifier: identifier, expected: expected, actual: current)
        }
    }
}
