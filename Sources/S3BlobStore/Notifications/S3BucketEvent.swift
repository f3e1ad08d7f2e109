import Foundation

/// One record of a bucket notification, as Ceph's gateway POSTs it to a topic's endpoint
/// (`{"Records":[{"eventName":"ObjectCreated:Put","s3":{"object":{"key":…,"eTag":…}}}]}`).
///
/// The key is read as sent: Ceph 16 sends it raw (a key `a b+c%d` arrives as those bytes), not
/// URL-encoded as AWS S3 does.
package struct S3BucketEvent: Sendable, Hashable {
    /// The event name: `ObjectCreated:Put`, `ObjectCreated:CompleteMultipartUpload`,
    /// `ObjectRemoved:Delete`, ... (an `s3:` prefix, as AWS writes it, is dropped).
    package var name: String
    /// The object's key.
    package var key: String
    /// S3's ETag of the object, unquoted (for a removal, the removed object's, when the gateway knows it).
    package var objectETag: String?
    /// The object's size in bytes.
    package var size: Int64?
    /// The gateway's ordering token for events of one key (hex; compare only within a key).
    package var sequencer: String?
    /// When the change happened, as sent (ISO 8601).
    package var time: String?
    /// The id of the bucket's notification entry that produced it.
    package var configurationID: String?

    /// An event.
    package init(
        name: String, key: String, objectETag: String? = nil, size: Int64? = nil, sequencer: String? = nil,
        time: String? = nil, configurationID: String? = nil
    ) {
        self.name = name
        self.key = key
        self.objectETag = objectETag
        self.size = size
        self.sequencer = sequencer
        self.time = time
        self.configurationID = configurationID
    }

    /// Whether the event says an object was written (put, copied, completed).
    package var isCreation: Bool { name.hasPrefix("ObjectCreated:") }
    /// Whether the event says an object was removed.
    package var isRemoval: Bool { name.hasPrefix("ObjectRemoved:") }

    /// The change this event makes to blob `identifier`; `nil` for an event that is neither a
    /// creation nor a removal (or a creation without an ETag).
    package func remoteChange(identifier: String) -> S3RemoteChange? {
        if isRemoval { return .removed(identifier: identifier) }
        if isCreation, let objectETag, !objectETag.isEmpty { return .stored(identifier: identifier, objectETag: objectETag) }
        return nil
    }

    /// The records of one notification body. Throws ``S3BucketEventError`` when the body is not a
    /// JSON object with a `Records` array, or a record lacks its event name or key.
    package static func records(in body: some Collection<UInt8>) throws(S3BucketEventError) -> [S3BucketEvent] {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(body))
        } catch {
            throw S3BucketEventError(reason: "not a notification document: \(error)")
        }
        return document.Records.map { record in
            let name = record.eventName.hasPrefix("s3:") ? String(record.eventName.dropFirst(3)) : record.eventName
            let object = record.s3.object
            return S3BucketEvent(
                name: name, key: object.key, objectETag: object.eTag.map(S3XMLValues.unquotedETag), size: object.size,
                sequencer: object.sequencer, time: record.eventTime, configurationID: record.s3.configurationId)
        }
    }

    // The JSON's shape; field names are the document's.
    private struct Document: Decodable {
        var Records: [Record]
    }

    private struct Record: Decodable {
        var eventName: String
        var eventTime: String?
        var s3: Entity
    }

    private struct Entity: Decodable {
        var configurationId: String?
        var object: Object
    }

    private struct Object: Decodable {
        var key: String
        var size: Int64?
        var eTag: String?
        var sequencer: String?
    }
}

/// Why a notification body could not be read.
package struct S3BucketEventError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    package var reason: String

    /// The reason.
    package var description: String { "bucket notification: \(reason)" }
}
