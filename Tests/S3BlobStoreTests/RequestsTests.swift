import Foundation
import Testing

@testable import S3BlobStore

/// The requests S3Bucket builds: method, path, query, headers and payload, as they will be signed and sent.
@Suite struct RequestsTests {
    static let ceph = S3Bucket(endpoint: S3Endpoint(scheme: .http, host: "127.0.0.1", port: 7480), name: "blobs", addressingStyle: .path)
    static let aws = S3Bucket(endpoint: .aws(region: "eu-west-1"), name: "blobs", addressingStyle: .virtualHosted)

    @Test func addressing() {
        #expect(Self.ceph.host == "127.0.0.1:7480")
        #expect(Self.ceph.path(forKey: "a/b") == "/blobs/a/b")
        #expect(Self.ceph.bucketPath == "/blobs")
        #expect(Self.aws.host == "blobs.s3.eu-west-1.amazonaws.com")
        #expect(Self.aws.path(forKey: "a/b") == "/a/b")
        #expect(Self.aws.bucketPath == "/")
        let configuration = S3Configuration(
            credentials: AWSCredentials(accessKeyID: "a", secretAccessKey: "b"), region: "us-east-1",
            endpoint: S3Endpoint(scheme: .http, host: "ceph", port: 80), addressingStyle: .path
        )
        #expect(S3Bucket(configuration: configuration, name: "x").host == "ceph")
    }

    @Test func keysAreNeverNormalised() throws {
        for key in ["/leading", "a//b", "../up", "sp ace+plus%25~!", "é/🙂", "\u{1}control"] {
            let request = try Self.ceph.getObject(key: key)
            #expect(request.path == "/blobs/" + key)
            #expect(request.target == S3URIEncoding.encodePath("/blobs/" + key))
        }
        #expect(try Self.ceph.getObject(key: "sp ace+plus%25~!").target == "/blobs/sp%20ace%2Bplus%2525~%21")
        #expect(try Self.ceph.headObject(key: "a//b").target == "/blobs/a//b")
    }

    @Test func invalidKeysAreRefusedBeforeSending() {
        #expect(throws: S3RequestError.self) { try Self.ceph.putObject(key: "", payload: .unsigned) }
        #expect(throws: S3RequestError.self) { try Self.ceph.deleteObject(key: String(repeating: "k", count: 1025)) }
        #expect(throws: Never.self) { try Self.ceph.deleteObject(key: String(repeating: "é", count: 512)) }
        #expect(throws: S3RequestError.self) { try Self.ceph.deleteObject(key: String(repeating: "é", count: 513)) }
    }

    @Test func putObjectWithHeadersMetadataAndConditions() throws {
        let headers = S3ObjectHeaders(
            contentType: "image/png", standard: [S3HeaderField("Cache-Control", "max-age=60")],
            metadata: [S3HeaderField("Created_At", "2026-11-24"), S3HeaderField("title", "Ünïcode ✓")]
        )
        let digest = SHA256.hash("body")
        let create = try Self.ceph.putObject(key: "k", payload: .sha256(digest), headers: headers, condition: .ifNoneMatchAny)
        #expect(create.method == "PUT")
        #expect(create.path == "/blobs/k")
        #expect(create.queryItems.isEmpty)
        #expect(create.payload == .sha256(digest))
        #expect(create.headers == [
            S3HeaderField("Host", "127.0.0.1:7480"), S3HeaderField("Content-Type", "image/png"),
            S3HeaderField("Cache-Control", "max-age=60"), S3HeaderField("x-amz-meta-created_at", "2026-11-24"),
            S3HeaderField("x-amz-meta-title", "Ünïcode ✓"), S3HeaderField("If-None-Match", "*"),
        ])
        // The gateway wants If-Match unquoted: a quoted ETag as S3 returns it is stripped.
        #expect(try Self.ceph.putObject(key: "k", payload: .unsigned, condition: .ifMatch(etag: "\"0123abcd\"")).header("If-Match") == "0123abcd")
        #expect(try Self.ceph.putObject(key: "k", payload: .unsigned, condition: .ifMatch(etag: "0123abcd")).header("If-Match") == "0123abcd")
        #expect(try Self.ceph.putObject(key: "k", payload: .unsigned, condition: .ifMatchAny).header("If-Match") == "*")
        #expect(try Self.ceph.putObject(key: "k", payload: .unsigned).header("If-None-Match") == nil)
    }

    @Test func headersThatCannotBeSentAreRefused() {
        for metadata in [S3HeaderField("bad name", "v"), S3HeaderField("", "v"), S3HeaderField("n", "line\r\nInjected: 1"), S3HeaderField("n", "nul\u{0}")] {
            #expect(throws: S3RequestError.self) {
                try Self.ceph.putObject(key: "k", payload: .unsigned, headers: S3ObjectHeaders(metadata: [metadata]))
            }
        }
        #expect(throws: S3RequestError.self) {
            try Self.ceph.createMultipartUpload(key: "k", headers: S3ObjectHeaders(contentType: "text/plain\n"))
        }
        #expect(throws: Never.self) {
            try Self.ceph.putObject(key: "k", payload: .unsigned, headers: S3ObjectHeaders(metadata: [S3HeaderField("n", "tab\there")]))
        }
    }

    @Test func getObjectRangesAndRevalidation() throws {
        #expect(try Self.ceph.getObject(key: "k", range: .bounded(first: 0, last: 9)).header("Range") == "bytes=0-9")
        #expect(try Self.ceph.getObject(key: "k", range: .from(first: 100)).header("Range") == "bytes=100-")
        #expect(try Self.ceph.getObject(key: "k", range: .suffix(count: 5)).header("Range") == "bytes=-5")
        #expect(try Self.ceph.getObject(key: "k").header("Range") == nil)
        #expect(try Self.ceph.getObject(key: "k", ifNoneMatch: "abc").header("If-None-Match") == "\"abc\"")
        #expect(throws: S3RequestError.self) { try Self.ceph.getObject(key: "k", range: .bounded(first: 5, last: 4)) }
        #expect(throws: S3RequestError.self) { try Self.ceph.getObject(key: "k", range: .suffix(count: 0)) }
        let get = try Self.ceph.getObject(key: "k")
        #expect(get.method == "GET" && get.payload == .emptyBody)
        #expect(try Self.ceph.headObject(key: "k").method == "HEAD")
        #expect(try Self.ceph.deleteObject(key: "k").method == "DELETE")
    }

    @Test func listObjectsV2() throws {
        let first = try Self.ceph.listObjects(prefix: "store/", maxKeys: 1000)
        #expect(first.method == "GET")
        #expect(first.target == "/blobs?encoding-type=url&list-type=2&max-keys=1000&prefix=store%2F")
        let next = try Self.aws.listObjects(prefix: "p", continuationToken: "last key+1", startAfter: "a", delimiter: "/")
        #expect(next.target == "/?continuation-token=last%20key%2B1&delimiter=%2F&encoding-type=url&list-type=2&prefix=p&start-after=a")
        #expect(try Self.ceph.listObjects().target == "/blobs?encoding-type=url&list-type=2")
        #expect(throws: S3RequestError.self) { try Self.ceph.listObjects(maxKeys: 1001) }
        #expect(throws: S3RequestError.self) { try Self.ceph.listObjects(maxKeys: 0) }
    }

    @Test func multipartRequests() throws {
        let create = try Self.ceph.createMultipartUpload(key: "big", headers: S3ObjectHeaders(contentType: "video/mp4"))
        #expect(create.method == "POST")
        #expect(create.target == "/blobs/big?uploads")
        #expect(CanonicalRequest.canonicalQuery(create.queryItems) == "uploads=")
        #expect(create.header("Content-Type") == "video/mp4")

        let digest = SHA256.hash("part")
        let part = try Self.ceph.uploadPart(key: "big", uploadID: "2~abc/+=", partNumber: 3, payload: .sha256(digest))
        #expect(part.method == "PUT")
        #expect(part.target == "/blobs/big?partNumber=3&uploadId=2~abc%2F%2B%3D")
        #expect(part.payload == .sha256(digest))
        #expect(throws: S3RequestError.self) { try Self.ceph.uploadPart(key: "big", uploadID: "u", partNumber: 0, payload: .unsigned) }
        #expect(throws: S3RequestError.self) { try Self.ceph.uploadPart(key: "big", uploadID: "u", partNumber: 10_001, payload: .unsigned) }

        let (complete, body) = try Self.ceph.completeMultipartUpload(key: "big", uploadID: "u1", parts: [(1, "\"e1\""), (2, "e2")])
        #expect(complete.method == "POST")
        #expect(complete.target == "/blobs/big?uploadId=u1")
        #expect(complete.payload == .sha256(SHA256.hash(body)))
        #expect(complete.header("Content-Type") == "application/xml")
        let document = try XMLReader.read(body)
        #expect(document.name == "CompleteMultipartUpload")
        #expect(document.children("Part").map { [$0.text(of: "PartNumber"), $0.text(of: "ETag")] } == [["1", "\"e1\""], ["2", "\"e2\""]])
        #expect(throws: S3RequestError.self) { try Self.ceph.completeMultipartUpload(key: "big", uploadID: "u1", parts: []) }
        #expect(throws: S3RequestError.self) { try Self.ceph.completeMultipartUpload(key: "big", uploadID: "u1", parts: [(2, "a"), (1, "b")]) }

        let abort = try Self.ceph.abortMultipartUpload(key: "big", uploadID: "u1")
        #expect(abort.method == "DELETE" && abort.target == "/blobs/big?uploadId=u1")

        let list = try Self.ceph.listMultipartUploads(prefix: "store/", keyMarker: "k", uploadIDMarker: "u", maxUploads: 10)
        #expect(list.target == "/blobs?encoding-type=url&key-marker=k&max-uploads=10&prefix=store%2F&upload-id-marker=u&uploads")
    }

    @Test func aBuiltRequestSignsAsOne() throws {
        // Everything the builders produce goes through the signer: Host is signed, the target matches the canonical path.
        let signer = SignatureV4(credentials: AWSCredentials(accessKeyID: "AK", secretAccessKey: "s"), region: "us-east-1")
        let request = try Self.ceph.putObject(key: "a b", payload: .unsigned, condition: .ifNoneMatchAny)
        let signed = signer.sign(request, at: Date(timeIntervalSince1970: 0))
        #expect(signed.canonicalRequest.hasPrefix("PUT\n/blobs/a%20b\n\nhost:127.0.0.1:7480\nif-none-match:*\n"))
        #expect(signed.authorization.contains("SignedHeaders=host;if-none-match;x-amz-content-sha256;x-amz-date,"))
    }

    @Test func s3ErrorNamesEndpointBucketKeyAndCode() {
        let context = Self.ceph.context("PutObject", key: "a/b")
        let body = Array("<?xml version=\"1.0\"?><Error><Code>PreconditionFailed</Code><Message>At least one precondition failed</Message><RequestId>tx1</RequestId></Error>".utf8)
        let error = S3Error(context: context, status: 412, body: body)
        #expect(error.code == "PreconditionFailed")
        #expect(error.description == "PutObject s3://blobs/a/b at http://127.0.0.1:7480: 412 PreconditionFailed (At least one precondition failed) [request tx1]")
        let bare = S3Error(context: Self.ceph.context("HeadObject", key: "k"), status: 404, body: [UInt8]())
        #expect(bare.code == nil)
        #expect(bare.description == "HeadObject s3://blobs/k at http://127.0.0.1:7480: 404 (no error code in the answer)")
        #expect(S3Error(context: context, status: 400, body: Array("not xml".utf8)).code == nil)
    }
}

/// What GetObject and HeadObject answers' headers say about the object.
@Suite struct ObjectHeadTests {
    @Test func headersOfAnObject() throws {
        let head = try S3ObjectHead(headers: [
            (name: "Content-Length", value: "10"), (name: "Content-Type", value: "image/png"),
            (name: "ETag", value: "\"0123456789abcdef0123456789abcdef\""), (name: "Last-Modified", value: "Tue, 24 Nov 2026 14:30:48 GMT"),
            (name: "Content-Range", value: "bytes 0-9/4096"), (name: "x-amz-meta-created-at", value: "2026-11-24"),
            (name: "X-Amz-Meta-Title", value: "Ünïcode ✓"), (name: "Cache-Control", value: "max-age=60"),
            (name: "x-amz-request-id", value: "tx1"), (name: "Accept-Ranges", value: "bytes"),
        ])
        #expect(head.contentLength == 10)
        #expect(head.contentType == "image/png")
        #expect(head.etag == "0123456789abcdef0123456789abcdef")
        #expect(head.lastModified == Date(timeIntervalSince1970: 1_795_530_648))
        #expect(head.contentRange == S3ContentRange("bytes 0-9/4096"))
        #expect(head.contentRange?.first == 0 && head.contentRange?.last == 9 && head.contentRange?.total == 4096)
        #expect(head.metadata == ["created-at": "2026-11-24", "title": "Ünïcode ✓"])
        #expect(head.storedHeaders == ["cache-control": "max-age=60"])
    }

    @Test func malformedHeadersAreErrors() throws {
        #expect(throws: S3ResponseParseError.self) { try S3ObjectHead(headers: [(name: "Content-Length", value: "-1")]) }
        #expect(throws: S3ResponseParseError.self) { try S3ObjectHead(headers: [(name: "Content-Range", value: "bytes 9-0/10")]) }
        #expect(throws: S3ResponseParseError.self) { try S3ObjectHead(headers: [(name: "Content-Range", value: "bytes */10")]) }
        #expect(S3ContentRange("bytes 5-9/*")?.total == nil)
        #expect(S3ContentRange("bytes 0-9/9") == nil)
        #expect(try S3ObjectHead(headers: [(name: "Last-Modified", value: "yesterday")]).lastModified == nil)
    }

    @Test(arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0), ("Tue, 29 Feb 2000 23:59:59 GMT", 951_868_799.0),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
    ])
    func httpDates(text: String, seconds: Double) {
        #expect(S3HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", ""])
    func notIMFFixdate(text: String) {
        #expect(S3HTTPDate.parse(text) == nil)
    }
}
