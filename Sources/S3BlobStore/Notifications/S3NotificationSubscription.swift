import Foundation

/// One listener's subscription to a bucket's changes: a persistent topic pushing to its endpoint,
/// and the bucket's notification entry sending object creations and removals (under a key
/// prefix) to that topic. The topic's name is also the entry's id, so members of a fleet, each
/// with a name of its own, never touch each other's entries.
///
/// Subscribing again under the same name (a restarted member) updates the topic's endpoint and
/// replaces the entry, and keeps the topic's queue: events the gateway could not deliver while the
/// member was away are delivered to it then.
package struct S3NotificationSubscription: Sendable, Hashable {
    /// The topic's name and the notification entry's id.
    package let name: String
    /// The topic's ARN.
    package let topicARN: String

    /// A subscription from its parts (``subscribe(_:name:pushEndpoint:keyPrefix:)`` makes one).
    package init(name: String, topicARN: String) {
        self.name = name
        self.topicARN = topicARN
    }

    /// Creates (or updates) the persistent topic `name` pushing to `pushEndpoint`, then adds the
    /// bucket's entry `name` for every object created or removed under `keyPrefix`. Blocking.
    package static func subscribe(
        _ client: S3Client, name: String, pushEndpoint: String, keyPrefix: String
    ) throws(S3ClientError) -> S3NotificationSubscription {
        let topic = client.bucket.createTopic(name: name, pushEndpoint: pushEndpoint, persistent: true)
        let context = client.bucket.context("CreateTopic \(name)")
        let answer = try retrying { () throws(S3ClientError) in try client.send(topic.request, body: .bytes(topic.body), context: context) }
        let arn: String
        do {
            arn = try S3TopicAnswers.createdTopicARN(answer.body)
        } catch {
            throw .malformedAnswer(context, reason: error.description)
        }
        let entry = client.bucket.putNotification(S3TopicNotification(id: name, topicARN: arn, keyPrefix: keyPrefix))
        let entryContext = client.bucket.context("PutBucketNotificationConfiguration \(name)")
        _ = try retrying { () throws(S3ClientError) in try client.send(entry.request, body: .bytes(entry.body), context: entryContext) }
        return S3NotificationSubscription(name: name, topicARN: arn)
    }

    /// Removes the bucket's entry, then the topic (in that order: on Ceph 16, while an entry
    /// names a deleted persistent topic, every PUT to the bucket fails). Blocking.
    package func cancel(_ client: S3Client) throws(S3ClientError) {
        let entry: S3Request
        do { entry = try client.bucket.deleteNotification(id: name) } catch { throw .refused(error) }
        let entryContext = client.bucket.context("DeleteBucketNotification \(name)")
        _ = try Self.retrying { () throws(S3ClientError) in try client.send(entry, context: entryContext) }
        let topic = client.bucket.deleteTopic(arn: topicARN)
        let topicContext = client.bucket.context("DeleteTopic \(name)")
        _ = try Self.retrying { () throws(S3ClientError) in try client.send(topic.request, body: .bytes(topic.body), context: topicContext) }
    }

    /// The bucket's notification entries (every member's).
    package static func entries(_ client: S3Client) throws(S3ClientError) -> [S3TopicNotification] {
        let context = client.bucket.context("GetBucketNotificationConfiguration")
        let answer = try client.send(client.bucket.getNotifications(), context: context)
        do {
            return try S3TopicNotification.entries(of: answer.body)
        } catch {
            throw .malformedAnswer(context, reason: error.description)
        }
    }

    /// Runs `body` up to four times while the gateway answers `5xx` (it answered `500 UnknownError`
    /// to one of two configuration changes made on one bucket at the same moment); every call
    /// retried here is idempotent (a put or delete by name or id).
    static func retrying<T>(_ body: () throws(S3ClientError) -> T) throws(S3ClientError) -> T {
        var attempt = 1
        while true {
            do {
                return try body()
            } catch {
                guard attempt < 4, let status = error.status, status >= 500 else { throw error }
                usleep(UInt32(100_000 * attempt + Int.random(in: 0..<50_000)))
                attempt += 1
            }
        }
    }
}
