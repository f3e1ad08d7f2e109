/// Bucket notifications and the SNS-style topics they publish to, as Ceph's gateway offers them:
/// a topic names an HTTP endpoint the gateway POSTs each event to, and a bucket's notification
/// entry says which events go to which topic.
///
/// The topic calls are not S3 calls: they are `POST /` with a form body (`Action=CreateTopic&...`),
/// signed with the same credentials (the gateway does not check the scope's service). They go to
/// the endpoint itself, so they need path-style addressing.
extension S3Bucket {
    /// PutBucketNotificationConfiguration with one entry: `PUT ?notification`. On Ceph's gateway it
    /// adds the entry (or replaces the one with the same id and topic), keeping the others.
    package func putNotification(_ entry: S3TopicNotification) -> (request: S3Request, body: [UInt8]) {
        let xml = "<NotificationConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\(entry.xml)</NotificationConfiguration>"
        let body = Array(xml.utf8)
        let request = request(
            "PUT", path: bucketPath, query: [S3QueryItem("notification")],
            headers: [S3HeaderField("Content-Type", "application/xml")], payload: .sha256(SHA256.hash(body)))
        return (request, body)
    }

    /// GetBucketNotificationConfiguration: `GET ?notification`; read it with ``S3TopicNotification/entries(of:)``.
    package func getNotifications() -> S3Request {
        request("GET", path: bucketPath, query: [S3QueryItem("notification")])
    }

    /// Removes the entry `id` only: `DELETE ?notification=ID` (Ceph's extension; without an id the
    /// gateway removes every entry of the bucket, other members' too).
    package func deleteNotification(id: String) throws(S3RequestError) -> S3Request {
        guard !id.isEmpty else {
            throw .invalidArgument(name: "notification id", reason: "an empty id would remove every notification of the bucket", operation: "DeleteBucketNotification")
        }
        return request("DELETE", path: bucketPath, query: [S3QueryItem("notification", id)])
    }

    /// CreateTopic `name` pushing to `pushEndpoint` (an `http://` URL the gateway POSTs events
    /// to). A **persistent** topic queues events and delivers them in the background, retrying
    /// while the endpoint is down; a synchronous one makes every PUT wait for the endpoint and
    /// loses the event when the endpoint refuses. Creating an existing name updates it. The
    /// answer holds the ARN (``S3TopicAnswers/createdTopicARN(_:)``).
    package func createTopic(name: String, pushEndpoint: String, persistent: Bool = true) -> (request: S3Request, body: [UInt8]) {
        topicRequest([
            ("Action", "CreateTopic"), ("Name", name),
            ("Attributes.entry.1.key", "push-endpoint"), ("Attributes.entry.1.value", pushEndpoint),
            ("Attributes.entry.2.key", "persistent"), ("Attributes.entry.2.value", persistent ? "true" : "false"),
        ])
    }

    /// DeleteTopic `arn`. Remove the bucket's entries naming it first: on Ceph 16, while an entry
    /// still names a deleted persistent topic, every PUT to the bucket fails (`400 InvalidArgument`).
    package func deleteTopic(arn: String) -> (request: S3Request, body: [UInt8]) {
        topicRequest([("Action", "DeleteTopic"), ("TopicArn", arn)])
    }

    /// ListTopics (all topics of the tenant); read it with ``S3TopicAnswers/topicARNs(_:)``.
    package func listTopics() -> (request: S3Request, body: [UInt8]) {
        topicRequest([("Action", "ListTopics")])
    }

    private func topicRequest(_ fields: [(String, String)]) -> (request: S3Request, body: [UInt8]) {
        let form = fields.map { S3URIEncoding.encodeQueryComponent($0.0) + "=" + S3URIEncoding.encodeQueryComponent($0.1) }
        let body = Array(form.joined(separator: "&").utf8)
        let request = S3Request(
            method: "POST", path: "/",
            headers: [S3HeaderField("Host", endpoint.hostHeader), S3HeaderField("Content-Type", "application/x-www-form-urlencoded")],
            payload: .sha256(SHA256.hash(body)))
        return (request, body)
    }
}
