import BlobStore
import Foundation

/// What one ``S3BlobStore`` instance remembers between requests; owned by its `state` lock.
struct S3StoreState: Sendable {
    /// What this instance last saw of an identifier's object: S3's ETag (to PUT `If-Match` without
    /// a HEAD first), the blob's ETag, `created` and expiry. A stale hint costs one `412` and a HEAD.
    struct Hint: Sendable {
        var objectETag: String
        var etag: ETag
        var created: Date
        var expires: Date?
    }

    /// At most this many hints and own-change records are kept (oldest dropped first).
    static let recordLimit = 4096

    var hints = BoundedRecord<[UInt8], Hint>(limit: recordLimit)
    /// This instance's writes (identifier bytes, object ETag) whose bucket notifications have not come
    /// back yet, with how many (two puts of the same content have the same S3 ETag).
    var ownWrites = BoundedRecord<OwnWrite, Int>(limit: recordLimit)
    /// Writes published from the bucket's notification before this instance's own PUT had returned
    /// (the echo can overtake the PUT's answer), with how many: that PUT then publishes nothing more.
    var echoedWrites = BoundedRecord<OwnWrite, Int>(limit: recordLimit)
    /// Identifiers this instance removed, with how many removals are still to be echoed.
    var ownRemovals = BoundedRecord<[UInt8], Int>(limit: recordLimit)

    struct OwnWrite: Hashable, Sendable {
        var identifier: [UInt8]
        var objectETag: String
    }

    /// The change feed: numbers changes, delivers them to subscribers and observers.
    var changes = ChangeFanOut()

    /// Numbers `kind` and hands it to every subscriber and observer (under the lock: commit order).
    mutating func publish(_ kind: BlobChange.Kind, store: String, date: Date) {
        changes.publish(kind, store: store, date: date)
    }
}

/// A dictionary that keeps at most `limit` entries, dropping the oldest insertion first.
struct BoundedRecord<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let limit: Int
    private var values: [Key: Value] = [:]
    /// Insertion order; may hold keys already removed (skipped when trimming).
    private var order: [Key] = []
    private var head = 0

    init(limit: Int) { self.limit = limit }

    subscript(key: Key) -> Value? {
        get { values[key] }
        set {
            guard let newValue else {
                values.removeValue(forKey: key)
                return
            }
            if values.updateValue(newValue, forKey: key) == nil { order.append(key) }
            trim()
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? { values.removeValue(forKey: key) }

    private mutating func trim() {
        while values.count > limit, head < order.count {
            values.removeValue(forKey: order[head])
            head += 1
        }
        // Compacts the order list once its dead front is as long as the live part.
        if head > limit {
            order.removeFirst(head)
            head = 0
        }
        if order.count - head > 4 * limit {
            order = order[head...].filter { values[$0] != nil }
            head = 0
        }
    }
}
