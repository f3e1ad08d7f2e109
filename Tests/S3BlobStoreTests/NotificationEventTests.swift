import Foundation
import Testing

@testable import S3BlobStore

/// Reading the gateway's notification bodies, and which blob of which store a key names.
@Suite struct NotificationEventTests {
    // As Ceph 16.2.15 POSTed it for `PUT pre/st/a b+c%d/é` (metadata trimmed): the key is raw, not URL-encoded.
    static let created = #"{"Records":[{"eventVersion":"2.2","eventSource":"ceph:s3","awsRegion":"","eventTime":"2026-11-24T18:31:16.714138Z","eventName":"ObjectCreated:Put","userIdentity":{"principalId":"blobstore-ci"},"requestParameters":{"sourceIPAddress":""},"responseElements":{"x-amz-request-id":"r","x-amz-id-2":"1008-default-default"},"s3":{"s3SchemaVersion":"1.0","configurationId":"m1","bucket":{"name":"blobstore-ci","ownerIdentity":{"principalId":"blobstore-ci"},"arn":"arn:aws:s3:::blobstore-ci","id":"c494"},"object":{"key":"pre/st/a b+c%d/é","size":5,"eTag":"5d41402abc4b2a76b9719d911017c592","versionId":"","sequencer":"F4D7056BD408732B","metadata":[{"key":"x-amz-date","val":"20261124T183116Z"}],"tags":[]}},"eventId":"1795545076.728959.5d41","opaqueData":""}]}"#
    static let removed = #"{"Records":[{"eventVersion":"2.2","eventSource":"ceph:s3","eventTime":"2026-11-24T18:31:16.740403Z","eventName":"ObjectRemoved:Delete","s3":{"configurationId":"m0","object":{"key":"pre/st/x","size":5,"eTag":"5d41402abc4b2a76b9719d911017c592","sequencer":"F4D7056B2DB2212C"}}}]}"#

    @Test func aCephRecordIsReadWithItsRawKey() throws {
        let records = try S3BucketEvent.records(in: Array(Self.created.utf8))
        #expect(records == [S3BucketEvent(
            name: "ObjectCreated:Put", key: "pre/st/a b+c%d/é", objectETag: "5d41402abc4b2a76b9719d911017c592", size: 5,
            sequencer: "F4D7056BD408732B", time: "2026-11-24T18:31:16.714138Z", configurationID: "m1")])
        #expect(records[0].isCreation && !records[0].isRemoval)
        #expect(records[0].remoteChange(identifier: "a b+c%d/é") == .stored(identifier: "a b+c%d/é", objectETag: "5d41402abc4b2a76b9719d911017c592"))
    }

    @Test func aRemovalBecomesARemovedChange() throws {
        let record = try #require(try S3BucketEvent.records(in: Array(Self.removed.utf8)).first)
        #expect(record.isRemoval)
        #expect(record.remoteChange(identifier: "x") == .removed(identifier: "x"))
    }

    @Test func awsStyleNamesAndQuotedETagsAreAccepted() throws {
        let body = #"{"Records":[{"eventName":"s3:ObjectCreated:CompleteMultipartUpload","s3":{"object":{"key":"k","eTag":"\"abc-2\""}}}]}"#
        let record = try #require(try S3BucketEvent.records(in: Array(body.utf8)).first)
        #expect(record.name == "ObjectCreated:CompleteMultipartUpload")
        #expect(record.remoteChange(identifier: "k") == .stored(identifier: "k", objectETag: "abc-2"))
    }

    @Test func otherEventsAndCreationsWithoutAnETagChangeNothing() {
        #expect(S3BucketEvent(name: "ObjectRestore:Completed", key: "k").remoteChange(identifier: "k") == nil)
        #expect(S3BucketEvent(name: "ObjectCreated:Put", key: "k").remoteChange(identifier: "k") == nil)
    }

    @Test func malformedBodiesAreRefused() throws {
        for body in ["", "{}", "[]", #"{"Records":[{"eventName":"ObjectCreated:Put"}]}"#, #"{"Records":"x"}"#, "\u{0}\u{ff}"] {
            #expect(throws: S3BucketEventError.self) { try S3BucketEvent.records(in: Array(body.utf8)) }
        }
        #expect(try S3BucketEvent.records(in: Array(#"{"Records":[]}"#.utf8)).isEmpty)
    }

    @Test func keysMapToTheirStoreAndIdentifier() {
        let layout = S3StoreLayout(prefix: "fleet")
        #expect(layout.blob(ofKey: "fleet/photos/a/b.jpg")! == ("photos", "a/b.jpg"))
        #expect(layout.blob(ofKey: "fleet/photos//x")! == ("photos", "/x"))
        #expect(layout.blob(ofKey: "fleet/.stores/photos") == nil, "a store marker is not a blob")
        #expect(layout.blob(ofKey: "fleet/photos/") == nil)
        #expect(layout.blob(ofKey: "fleet/photos") == nil)
        #expect(layout.blob(ofKey: "other/photos/a") == nil)
        #expect(layout.blob(ofKey: "fleetx/photos/a") == nil)
        #expect(S3StoreLayout().blob(ofKey: "s/é 🙂")! == ("s", "é 🙂"))
        for (store, identifier) in [("s", "x"), ("photos", "a b/%2F/c")] {
            let key = layout.blobKey(store: store, identifier: identifier)
            #expect(layout.blob(ofKey: key)! == (store, identifier))
            #expect(layout.identifier(store: store, key: key) == identifier)
        }
    }
}
