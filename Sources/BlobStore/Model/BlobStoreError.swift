package import BlobSystem

/// Everything a store operation can fail with. Each case carries what a person needs to act.
public enum BlobStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No blob with this identifier in this store.
    case notFound(store: String, identifier: String)
    /// The identifier breaks a rule (see ``BlobIdentifier``).
    case invalidIdentifier(identifier: String, rule: BlobIdentifier.Rule)
    /// The store name breaks the rule (see ``StoreName``).
    case invalidStoreName(name: String, reason: String)
    /// A conditional write found another version: `expected` is the condition (`nil` = "must not exist"), `actual` the current ETag (`nil` = absent).
    case preconditionFailed(store: String, identifier: String, expected: ETag?, actual: ETag?)
    /// The content was to be an image and is not one.
    case notAnImage(store: String, identifier: String, reason: String)
    /// The content was to be a JSON record and is not one, or a stored record does not decode.
    case invalidRecord(store: String, identifier: String, reason: String)
    /// Content type or user metadata break ``UserMetadataRules``.
    case invalidMetadata(store: String, identifier: String, reason: String)
    /// Something exceeds a limit: `what` names it.
    case tooLarge(what: String, limit: Int64, actual: Int64)
    /// A list query is malformed: a limit outside 1...10,000 or a cursor that is not one this store issued.
    case invalidQuery(store: String, reason: String)
    /// A requested byte range does not fit the blob.
    case rangeNotSatisfiable(store: String, identifier: String, size: Int64)
    /// A system call failed: `operation` names it, `path` the file or folder, `errno` why.
    case io(operation: String, path: String, errno: ErrorNumber)
    /// Another process has this store open: `path` is its lock file, `holder` says who (`pid N`, or
    /// `blobd, pid N` for the daemon serving the root).
    case storeLocked(path: String, holder: String)
    /// A stored file is damaged or foreign.
    case corrupt(path: String, reason: String)
    /// The root was written by a newer, unknown layout version.
    case unsupportedFormat(path: String, found: String)
    /// The store's backend (an object store) could not be reached or failed: `backend` names it
    /// (`s3://BUCKET/PREFIX at http://HOST:PORT`), `reason` says what happened (a timeout, a refused
    /// connection, the object store's error code). Nothing was changed unless the reason says so.
    case backendUnavailable(store: String, backend: String, reason: String)

    /// A sentence naming the store, blob, path, errno or limit involved.
    public var description: String {
        switch self {
        case .notFound(let store, let id):
            return "blob '\(id)' not found in store '\(store)'"
        case .invalidIdentifier(let id, let rule):
            return "invalid identifier '\(BlobStoreError.abbreviated(id))': \(rule)"
        case .invalidStoreName(let name, let reason):
            return "invalid store name '\(name)': \(reason)"
        case .preconditionFailed(let store, let id, let expected, let actual):
            let want = expected.map { "ETag \($0)" } ?? "no existing blob"
            let have = actual.map { "ETag \($0)" } ?? "no blob"
            return "precondition failed for blob '\(id)' in store '\(store)': expected \(want), found \(have)"
        case .notAnImage(let store, let id, let reason):
            return "blob '\(id)' for store '\(store)' is not a recognised image: \(reason)"
        case .invalidRecord(let store, let id, let reason):
            return "blob '\(id)' in store '\(store)' is not a valid record: \(reason)"
        case .invalidMetadata(let store, let id, let reason):
            return "invalid metadata for blob '\(id)' in store '\(store)': \(reason)"
        case .tooLarge(let what, let limit, let actual):
            return "\(what) is too large: \(actual) bytes exceeds the limit of \(limit) bytes"
        case .invalidQuery(let store, let reason):
            return "invalid list query for store '\(store)': \(reason)"
        case .rangeNotSatisfiable(let store, let id, let size):
            return "requested range is outside blob '\(id)' in store '\(store)' (size \(size) bytes)"
        case .io(let operation, let path, let errno):
            return "\(operation) failed for \(path): \(errno)"
        case .storeLocked(let path, let holder):
            // One sentence whoever builds it: `path` names the lock file (or, from a client, the store
            // as blobd serves it), `holder` the process (`pid N`, `blobd, pid N`).
            return holder.hasPrefix("blobd")
                ? "\(path) is held by \(holder); go through blobd, or stop it"
                : "\(path) is in use by another process (\(holder)); wait for it to finish, or stop it"
        case .corrupt(let path, let reason):
            return "corrupt file \(path): \(reason)"
        case .unsupportedFormat(let path, let found):
            return "\(path) has layout '\(found)', newer than this BlobStore understands; upgrade BlobStore"
        case .backendUnavailable(let store, let backend, let reason):
            return "store '\(store)' cannot use its backend \(backend): \(reason)"
        }
    }

    /// ``io(operation:path:errno:)`` from the `Errno` a BlobSystem wrapper threw, so that package code
    /// passes what it caught as it is and the public case shows no BlobSystem type.
    package static func io(operation: String, path: String, errno: Errno) -> BlobStoreError {
        .io(operation: operation, path: path, errno: ErrorNumber(errno))
    }

    static func abbreviated(_ text: String) -> String {
        text.utf8.count <= 80 ? text : String(text.prefix(60)) + "…(\(text.utf8.count) bytes)"
    }
}
