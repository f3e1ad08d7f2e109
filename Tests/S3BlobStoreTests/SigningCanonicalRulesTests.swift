import Foundation
import Testing

@testable import S3BlobStore

/// Each canonicalisation rule on its own, with the S3-specific ones the generic suite cannot show.
@Suite struct SigningCanonicalRulesTests {
    static let signer = SignatureV4(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret"), region: "us-east-1")

    @Test func pathIsEncodedOnceKeepingSlashAndNeverNormalised() {
        #expect(S3URIEncoding.encodePath("/b/a b/%/+/~/!/é") == "/b/a%20b/%25/%2B/~/%21/%C3%A9")
        #expect(S3URIEncoding.encodePath("/b//x/../y/./") == "/b//x/../y/./")
        #expect(S3URIEncoding.encodePath("") == "/")
        #expect(S3URIEncoding.encodePath("/b/-._~AZaz09") == "/b/-._~AZaz09")
        let request = S3Request(method: "GET", path: "/bucket/%41 b", headers: [S3HeaderField("Host", "h")])
        #expect(CanonicalRequest(request).text.split(separator: "\n")[1] == "/bucket/%2541%20b")
        #expect(request.target == "/bucket/%2541%20b")
    }

    @Test func queryIsEncodedAndSortedByEncodedNameThenValue() {
        let items = [
            S3QueryItem("prefix", "a+b c/~"), S3QueryItem("a", "2"), S3QueryItem("B", "x"), S3QueryItem("a", "10"),
            S3QueryItem("é", ""), S3QueryItem("uploads"),
        ]
        // Byte order: uppercase before lowercase, "%" before letters, "10" before "2".
        #expect(CanonicalRequest.canonicalQuery(items) == "%C3%A9=&B=x&a=10&a=2&prefix=a%2Bb%20c%2F~&uploads=")
        let request = S3Request(method: "GET", path: "/", queryItems: items)
        #expect(request.target == "/?%C3%A9&B=x&a=10&a=2&prefix=a%2Bb%20c%2F~&uploads")
    }

    @Test func headersAreLoweredTrimmedCollapsedSortedAndMerged() {
        let headers = [
            S3HeaderField("X-Amz-Meta-B", "  two   words\t here  "), S3HeaderField("Host", "h"),
            S3HeaderField("x-amz-meta-a", "1"), S3HeaderField("X-AMZ-META-A", "2"), S3HeaderField("Content-Type", "text/plain"),
        ]
        let canonical = CanonicalRequest(S3Request(method: "PUT", path: "/k", headers: headers, payload: .unsigned))
        #expect(canonical.text == """
            PUT
            /k

            content-type:text/plain
            host:h
            x-amz-meta-a:1,2
            x-amz-meta-b:two words here

            content-type;host;x-amz-meta-a;x-amz-meta-b
            UNSIGNED-PAYLOAD
            """)
        #expect(canonical.signedHeaders == "content-type;host;x-amz-meta-a;x-amz-meta-b")
    }

    @Test func sessionTokenIsSentAndSigned() {
        var signer = Self.signer
        signer.credentials.sessionToken = "token/+="
        let signed = signer.sign(S3Request(method: "GET", path: "/k", headers: [S3HeaderField("Host", "h")]), at: Date(timeIntervalSince1970: 0))
        #expect(signed.headersToAdd.contains(S3HeaderField("x-amz-security-token", "token/+=")))
        #expect(signed.canonicalRequest.contains("\nx-amz-security-token:token/+=\n"))
        #expect(signed.authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
        #expect(!Self.signer.sign(S3Request(method: "GET", path: "/k"), at: Date()).headersToAdd.contains { $0.name == "x-amz-security-token" })
    }

    @Test func payloadHashIsSentAndSigned() {
        let body = Array("hello".utf8)
        let signed = Self.signer.sign(S3Request(method: "PUT", path: "/k", payload: .sha256(SHA256.hash(body))), at: Date(timeIntervalSince1970: 0))
        let hash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        #expect(signed.headersToAdd.contains(S3HeaderField("x-amz-content-sha256", hash)))
        #expect(signed.canonicalRequest.hasSuffix("\n" + hash))
        let unsigned = Self.signer.sign(S3Request(method: "PUT", path: "/k", payload: .unsigned), at: Date(timeIntervalSince1970: 0))
        #expect(unsigned.headersToAdd.contains(S3HeaderField("x-amz-content-sha256", "UNSIGNED-PAYLOAD")))
        #expect(unsigned.canonicalRequest.hasSuffix("\nUNSIGNED-PAYLOAD"))
    }

    @Test func theClockIsTheCallers() {
        let request = S3Request(method: "GET", path: "/k", headers: [S3HeaderField("Host", "h")])
        let first = Self.signer.sign(request, at: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(first == Self.signer.sign(request, at: Date(timeIntervalSince1970: 1_700_000_000.9)))
        #expect(first.signature != Self.signer.sign(request, at: Date(timeIntervalSince1970: 1_700_000_001)).signature)
        #expect(first.stringToSign.split(separator: "\n")[2] == "20231114/us-east-1/s3/aws4_request")
    }

    @Test(arguments: [
        (Int64(0), "19700101T000000Z"), (951_782_400, "20000229T000000Z"), (951_868_799, "20000229T235959Z"),
        (1_456_790_399, "20160229T235959Z"), (1_440_938_160, "20150830T123600Z"), (4_102_444_800, "21000101T000000Z"),
        (-1, "19691231T235959Z"),
    ])
    func amzDate(seconds: Int64, expected: String) {
        let date = AMZDate(unixSeconds: seconds)
        #expect(date.timestamp == expected)
        #expect(date.dateStamp == String(expected.prefix(8)))
    }

    @Test func signingKeyDerivation() {
        // The worked example of the Signature V4 documentation ("Examples of how to derive a signing key").
        let signer = SignatureV4(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1", service: "iam"
        )
        #expect(signer.signingKey(AMZDate(unixSeconds: 1_329_264_000)).hex == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
    }

    @Test func theKeptSigningKeyFollowsTheDayTheCredentialsAndTheRegion() {
        // The signer keeps its last key; each of these must get the key derived afresh for its scope.
        var signer = SignatureV4(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "first-secret"), region: "us-east-1")
        let day = AMZDate(unixSeconds: 1_329_264_000)
        let sameDayLater = AMZDate(unixSeconds: 1_329_264_000 + 3_600)
        let nextDay = AMZDate(unixSeconds: 1_329_264_000 + 86_400)
        func fresh(_ time: AMZDate) -> SHA256Digest {
            SignatureV4.deriveSigningKey(time, secretAccessKey: signer.credentials.secretAccessKey, region: signer.region, service: signer.service)
        }
        #expect(signer.signingKey(day) == fresh(day))
        #expect(signer.signingKey(sameDayLater) == fresh(day))
        #expect(signer.signingKey(nextDay) == fresh(nextDay) && fresh(nextDay) != fresh(day))
        #expect(signer.signingKey(day) == fresh(day))
        let copy = signer
        signer.credentials = AWSCredentials(accessKeyID: "AKID", secretAccessKey: "second-secret")
        #expect(signer.signingKey(day) == fresh(day))
        #expect(copy.signingKey(day) != signer.signingKey(day), "a copy signing with the old credentials shares the cache")
        #expect(copy.signingKey(day) == SignatureV4.deriveSigningKey(day, secretAccessKey: "first-secret", region: "us-east-1", service: "s3"))
        signer.region = "eu-west-1"
        #expect(signer.signingKey(day) == fresh(day))
    }

    @Test func credentialsNeverShowTheSecret() {
        let credentials = AWSCredentials(accessKeyID: "AKID", secretAccessKey: "s3cr3t-value", sessionToken: "t0k3n-value")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [credentials.description, String(reflecting: credentials), "\(credentials)", dumped] {
            #expect(!text.contains("s3cr3t-value"))
            #expect(!text.contains("t0k3n-value"))
            #expect(text.contains("AKID"))
        }
    }
}
