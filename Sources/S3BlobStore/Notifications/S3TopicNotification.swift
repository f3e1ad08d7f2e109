/// One entry of a bucket's notification configuration: which topic hears which events on which keys.
///
/// On Ceph's gateway a bucket holds any number of these, each added by its own
/// PutBucketNotificationConfiguration and removed by its own `DELETE ?notification=ID`: putting one
/// does not replace the others (docs/SCALE-OUT.md, "Fleet"). Two entries with one `id` but
/// different topics both stay, and a delete by that id removes only one of them, so give every
/// entry its own id.
package struct S3TopicNotification: Sendable, Hashable {
    /// The events a fleet member listens to: every way an object is created or removed.
    package static let objectChangeEvents = ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]

    /// The entry's id, unique in the bucket.
    package var id: String
    /// The topic's ARN (``S3TopicAnswers/createdTopicARN(_:)``).
    package var topicARN: String
    /// The event names (`s3:ObjectCreated:*`, ...).
    package var events: [String]
    /// Only keys starting with this are notified; empty: every key.
    package var keyPrefix: String

    /// An entry.
    package init(id: String, topicARN: String, events: [String] = Self.objectChangeEvents, keyPrefix: String = "") {
        self.id = id
        self.topicARN = topicARN
        self.events = events
        self.keyPrefix = keyPrefix
    }

    /// The `<TopicConfiguration>` element.
    var xml: String {
        var xml = "<TopicConfiguration><Id>\(S3XMLValues.escaped(id))</Id><Topic>\(S3XMLValues.escaped(topicARN))</Topic>"
        if !keyPrefix.isEmpty {
            xml += "<Filter><S3Key><FilterRule><Name>prefix</Name><Value>\(S3XMLValues.escaped(keyPrefix))</Value></FilterRule></S3Key></Filter>"
        }
        for event in events { xml += "<Event>\(S3XMLValues.escaped(event))</Event>" }
        return xml + "</TopicConfiguration>"
    }

    /// The entries of a GetBucketNotificationConfiguration answer (`<NotificationConfiguration>`).
    package static func entries(of document: some Collection<UInt8>) throws(XMLReadError) -> [S3TopicNotification] {
        let root = try XMLReader.read(document)
        guard root.name == "NotificationConfiguration" else {
            throw XMLReadError(offset: 0, reason: "expected <NotificationConfiguration>, found <\(root.name)>")
        }
        return root.children("TopicConfiguration").map { element in
            let rules = element.child("Filter")?.child("S3Key")?.children("FilterRule") ?? []
            let prefix = rules.first { $0.text(of: "Name")?.lowercased() == "prefix" }?.text(of: "Value") ?? ""
            return S3TopicNotification(
                id: element.text(of: "Id") ?? "", topicARN: element.text(of: "Topic") ?? "",
                events: element.children("Event").map(\.text), keyPrefix: prefix)
        }
    }
}
