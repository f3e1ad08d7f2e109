import Foundation
import Testing

@testable import S3BlobStore

/// The notification and topic requests, and the gateway's answers to them (captured from Ceph 16.2.15).
@Suite struct NotificationRequestsTests {
    static let ceph = S3Bucket(endpoint: S3Endpoint(scheme: .http, host: "127.0.0.1", port: 7480), name: "blobs", addressingStyle: .path)

    @Test func putNotificationSendsOneEntryWithItsPrefixFilterAndSignsTheBody() {
        let (request, body) = Self.ceph.putNotification(
            S3TopicNotification(id: "member-a", topicARN: "arn:aws:sns:default::member-a", keyPrefix: "fleet/<x>/"))
        #expect(request.method == "PUT")
        #expect(request.target == "/blobs?notification")
        #expect(request.payload == .sha256(SHA256.hash(body)))
        let xml = String(decoding: body, as: UTF8.self)
        #expect(xml.contains("<TopicConfiguration><Id>member-a</Id><Topic>arn:aws:sns:default::member-a</Topic>"))
        #expect(xml.contains("<Filter><S3Key><FilterRule><Name>prefix</Name><Value>fleet/&lt;x&gt;/</Value></FilterRule></S3Key></Filter>"))
        #expect(xml.contains("<Event>s3:ObjectCreated:*</Event><Event>s3:ObjectRemoved:*</Event>"))
        let unfiltered = String(decoding: Self.ceph.putNotification(S3TopicNotification(id: "b", topicARN: "arn")).body, as: UTF8.self)
        #expect(!unfiltered.contains("<Filter>"))
    }

    @Test func deleteNotificationNamesItsIdAndRefusesAnEmptyOne() throws {
        #expect(try Self.ceph.deleteNotification(id: "member a").target == "/blobs?notification=member%20a")
        #expect(try Self.ceph.deleteNotification(id: "m").method == "DELETE")
        // Without an id the gateway would remove every member's entry.
        #expect(throws: S3RequestError.self) { try Self.ceph.deleteNotification(id: "") }
        #expect(Self.ceph.getNotifications().target == "/blobs?notification")
    }

    @Test func topicCallsArePostsToTheEndpointWithAFormBody() {
        let (request, body) = Self.ceph.createTopic(name: "member-a", pushEndpoint: "http://127.0.0.1:9000")
        #expect(request.method == "POST")
        #expect(request.target == "/")
        #expect(request.header("Host") == "127.0.0.1:7480")
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.payload == .sha256(SHA256.hash(body)))
        #expect(String(decoding: body, as: UTF8.self) == "Action=CreateTopic&Name=member-a"
            + "&Attributes.entry.1.key=push-endpoint&Attributes.entry.1.value=http%3A%2F%2F127.0.0.1%3A9000"
            + "&Attributes.entry.2.key=persistent&Attributes.entry.2.value=true")
        #expect(String(decoding: Self.ceph.deleteTopic(arn: "arn:aws:sns:default::m").body, as: UTF8.self)
            == "Action=DeleteTopic&TopicArn=arn%3Aaws%3Asns%3Adefault%3A%3Am")
        #expect(String(decoding: Self.ceph.listTopics().body, as: UTF8.self) == "Action=ListTopics")
    }

    @Test func answersAreRead() throws {
        let created = #"<CreateTopicResponse xmlns="https://sns.amazonaws.com/doc/2010-03-31/"><CreateTopicResult><TopicArn>arn:aws:sns:default::fx</TopicArn></CreateTopicResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></CreateTopicResponse>"#
        #expect(try S3TopicAnswers.createdTopicARN(Array(created.utf8)) == "arn:aws:sns:default::fx")
        #expect(throws: XMLReadError.self) { try S3TopicAnswers.createdTopicARN(Array("<Error><Code>x</Code></Error>".utf8)) }

        let listed = #"<ListTopicsResponse xmlns="https://sns.amazonaws.com/doc/2010-03-31/"><ListTopicsResult><Topics><member><User></User><Name>a</Name><EndPoint><EndpointAddress>http://127.0.0.1:1</EndpointAddress><Persistent>True</Persistent></EndPoint><TopicArn>arn:aws:sns:default::a</TopicArn><OpaqueData></OpaqueData></member><member><Name>b</Name><TopicArn>arn:aws:sns:default::b</TopicArn></member></Topics></ListTopicsResult></ListTopicsResponse>"#
        #expect(try S3TopicAnswers.topicARNs(Array(listed.utf8)) == ["arn:aws:sns:default::a", "arn:aws:sns:default::b"])

        let configuration = "<NotificationConfiguration><TopicConfiguration><Id>m0</Id><Topic>arn:aws:sns:default::exp-0</Topic><Filter><S3Key><FilterRule><Name>prefix</Name><Value>pre/</Value></FilterRule></S3Key></Filter><Event>s3:ObjectCreated:*</Event><Event>s3:ObjectRemoved:*</Event></TopicConfiguration><TopicConfiguration><Id>m1</Id><Topic>arn:aws:sns:default::exp-1</Topic><Event>s3:ObjectCreated:*</Event></TopicConfiguration></NotificationConfiguration>"
        #expect(try S3TopicNotification.entries(of: Array(configuration.utf8)) == [
            S3TopicNotification(id: "m0", topicARN: "arn:aws:sns:default::exp-0", keyPrefix: "pre/"),
            S3TopicNotification(id: "m1", topicARN: "arn:aws:sns:default::exp-1", events: ["s3:ObjectCreated:*"]),
        ])
        #expect(try S3TopicNotification.entries(of: Array("<NotificationConfiguration/>".utf8)) == [])
    }
}
