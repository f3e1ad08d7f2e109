import Foundation
import Testing

@testable import S3BlobStore

/// The examples of the S3 API reference, "Signature Calculations for the Authorization Header:
/// Transferring Payload in a Single Chunk" and "Authenticating Requests: Using Query Parameters":
/// bucket `examplebucket`, 2013-05-24T00:00:00Z, us-east-1, and their published signatures.
@Suite struct SigningS3ExamplesTests {
    static let signer = SignatureV4(
        credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1"
    )
    static let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
    static let host = S3HeaderField("Host", "examplebucket.s3.amazonaws.com")
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    @Test func getObjectWithRange() {
        let request = S3Request(method: "GET", path: "/test.txt", headers: [Self.host, S3HeaderField("Range", "bytes=0-9")])
        let signed = Self.signer.sign(request, at: Self.date)
        #expect(signed.canonicalRequest == """
            GET
            /test.txt

            host:examplebucket.s3.amazonaws.com
            range:bytes=0-9
            x-amz-content-sha256:\(Self.emptyHash)
            x-amz-date:20130524T000000Z

            host;range;x-amz-content-sha256;x-amz-date
            \(Self.emptyHash)
            """)
        #expect(signed.stringToSign == """
            AWS4-HMAC-SHA256
            20130524T000000Z
            20130524/us-east-1/s3/aws4_request
            7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
            """)
        #expect(signed.authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(signed.headersToAdd.map(\.name) == ["x-amz-date", "x-amz-content-sha256", "Authorization"])
    }

    @Test func putObject() {
        let body = "Welcome to Amazon S3."
        let request = S3Request(
            method: "PUT", path: "/test$file.text",
            headers: [
                Self.host, S3HeaderField("Date", "Fri, 24 May 2013 00:00:00 GMT"),
                S3HeaderField("x-amz-storage-class", "REDUCED_REDUNDANCY"),
            ],
            payload: .sha256(SHA256.hash(body))
        )
        let signed = Self.signer.sign(request, at: Self.date)
        #expect(signed.canonicalRequest.split(separator: "\n")[1] == "/test%24file.text")
        #expect(signed.headersToAdd[1] == S3HeaderField("x-amz-content-sha256", "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"))
        #expect(signed.authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test func getBucketLifecycle() {
        let request = S3Request(method: "GET", path: "/", queryItems: [S3QueryItem("lifecycle")], headers: [Self.host])
        let signed = Self.signer.sign(request, at: Self.date)
        #expect(signed.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)[2] == "lifecycle=")
        #expect(signed.signature == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
        #expect(request.target == "/?lifecycle")
    }

    @Test func listObjects() {
        let request = S3Request(
            method: "GET", path: "/", queryItems: [S3QueryItem("prefix", "J"), S3QueryItem("max-keys", "2")], headers: [Self.host]
        )
        let signed = Self.signer.sign(request, at: Self.date)
        #expect(signed.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)[2] == "max-keys=2&prefix=J")
        #expect(signed.signature == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
        #expect(request.target == "/?max-keys=2&prefix=J")
    }

    @Test func presignedGetObject() {
        let request = S3Request(method: "GET", path: "/test.txt", headers: [Self.host])
        let presigned = Self.signer.presign(request, at: Self.date, expires: 86_400)
        #expect(presigned.queryItems.last == S3QueryItem("X-Amz-Signature", "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"))
        // Out-of-range lifetimes are clamped to S3's 1 s ... 7 days.
        #expect(Self.signer.presign(request, at: Self.date, expires: 0).queryItems.contains(S3QueryItem("X-Amz-Expires", "1")))
        #expect(Self.signer.presign(request, at: Self.date, expires: 10_000_000).queryItems.contains(S3QueryItem("X-Amz-Expires", "604800")))
        #expect(SignatureV4(configuration: S3Configuration(
            credentials: Self.signer.credentials, region: "us-east-1", endpoint: .aws(region: "us-east-1"), addressingStyle: .virtualHosted
        )).presign(request, at: Self.date, expires: 86_400) == presigned)
        #expect(presigned.target == "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404&X-Amz-SignedHeaders=host")
    }
}
