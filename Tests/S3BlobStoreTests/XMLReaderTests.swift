import Foundation
import Testing

@testable import S3BlobStore

/// The small XML reader and the S3 answers parsed with it.
@Suite struct XMLReaderTests {
    @Test func elementsTextAttributesEntitiesAndCDATA() throws {
        let root = try XMLReader.read("""
            \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE r [ <!ENTITY x "y"> ]>
            <!-- a comment -->
            <s3:Root xmlns:s3="urn:x" a='1' b="&lt;&amp;&quot;">
              <Child>one &amp; two &#65;&#x42; &#x1F642;</Child>
              <Empty/>
              <Child><![CDATA[<raw> & ]]>tail</Child>
              <?pi ignored?><!-- ignored -->
            </s3:Root>
            """)
        #expect(root.name == "Root")
        #expect(root.attributes == ["s3": "urn:x", "a": "1", "b": "<&\""])
        #expect(root.children.map(\.name) == ["Child", "Empty", "Child"])
        #expect(root.text(of: "Child") == "one & two AB 🙂")
        #expect(root.children("Child")[1].text == "<raw> & tail")
        #expect(root.text(of: "Empty") == "")
        #expect(root.child("Missing") == nil)
    }

    @Test(arguments: [
        "", "   ", "text", "<a>", "<a></b>", "<a><b></a>", "<a>&unknown;</a>", "<a>&#0;</a>", "<a>&#xD800;</a>", "<a>& b</a>",
        "<a b=c></a>", "<a b=\"c></a>", "<a><![CDATA[x</a>", "<a><!-- x</a>", "<!DOCTYPE a", "<a", "</a>", "<>", "<a/",
    ])
    func malformedDocumentsAreErrors(text: String) {
        #expect(throws: XMLReadError.self) { try XMLReader.read(text) }
    }

    @Test func nestingIsBounded() throws {
        let deep = String(repeating: "<a>", count: XMLReader.maximumDepth + 1) + String(repeating: "</a>", count: XMLReader.maximumDepth + 1)
        #expect(throws: XMLReadError.self) { try XMLReader.read(deep) }
        let allowed = String(repeating: "<a>", count: XMLReader.maximumDepth) + String(repeating: "</a>", count: XMLReader.maximumDepth)
        #expect(try XMLReader.read(allowed).name == "a")
    }

    /// Random bytes, and random mutations of a real answer, never trap: they parse or throw.
    @Test func randomInputNeverCrashes() {
        let seed = UInt64(UInt32.random(in: 0...UInt32.max))
        var random = SeededRandom(seed: seed)
        let alphabet = Array("<>/=\"'&;#x![]?-CDATA abc:\n".utf8)
        let sample = Array(Self.listing.utf8)
        var parsed = 0
        for round in 0..<3000 {
            var input: [UInt8]
            switch round % 3 {
            case 0: input = random.bytes(count: Int(random.next() % 200))
            case 1: input = (0..<Int(random.next() % 200)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            default:
                input = sample
                for _ in 0..<(1 + random.next() % 8) {
                    let index = Int(random.next() % UInt64(input.count))
                    switch random.next() % 3 {
                    case 0: input[index] = UInt8(truncatingIfNeeded: random.next())
                    case 1: input.remove(at: index)
                    default: input.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: index)
                    }
                }
            }
            if (try? XMLReader.read(input)) != nil { parsed += 1 }
            _ = try? S3ListObjectsPage(xml: input)
            _ = S3ErrorBody(xml: input)
        }
        // Some mutated listings still parse, so the parser was exercised past the first byte.
        #expect(parsed > 0, "seed \(seed)")
    }

    static let listing = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>blobs</Name><Prefix>store%2F</Prefix><KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys>
          <EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
          <NextContinuationToken>store/c+d</NextContinuationToken>
          <Contents><Key>store/a+b%2Bc%20d%01</Key><LastModified>2026-11-24T14:30:48.123Z</LastModified>
            <ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag><Size>4096</Size><StorageClass>STANDARD</StorageClass></Contents>
          <Contents><Key>store/%C3%A9%F0%9F%99%82</Key><LastModified>2026-11-24T14:30:49Z</LastModified><ETag>"e2"</ETag><Size>0</Size></Contents>
          <CommonPrefixes><Prefix>store/dir%2F</Prefix></CommonPrefixes>
        </ListBucketResult>
        """

    @Test func listBucketResultWithURLEncodedKeys() throws {
        let page = try S3ListObjectsPage(xml: Array(Self.listing.utf8))
        #expect(page.objects.map(\.key) == ["store/a b+c d\u{1}", "store/é🙂"])
        #expect(page.objects[0].etag == "0123456789abcdef0123456789abcdef")
        #expect(page.objects[0].size == 4096)
        #expect(abs((page.objects[0].lastModified?.timeIntervalSince1970 ?? 0) - 1_795_530_648.123) < 0.000_01)
        #expect(page.objects[1].lastModified == Date(timeIntervalSince1970: 1_795_530_649))
        #expect(page.objects[1].etag == "e2")
        #expect(page.commonPrefixes == ["store/dir/"])
        #expect(page.isTruncated)
        #expect(page.nextContinuationToken == "store/c+d")
    }

    @Test func listBucketResultWithoutEncodingKeepsKeys() throws {
        let page = try S3ListObjectsPage(xml: Array("<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a+b%20</Key><Size>1</Size></Contents></ListBucketResult>".utf8))
        #expect(page.objects.map(\.key) == ["a+b%20"])
        #expect(!page.isTruncated && page.nextContinuationToken == nil)
        #expect(throws: S3ResponseParseError.self) { try S3ListObjectsPage(xml: Array("<Error><Code>x</Code></Error>".utf8)) }
        #expect(throws: S3ResponseParseError.self) {
            try S3ListObjectsPage(xml: Array("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>".utf8))
        }
        #expect(throws: S3ResponseParseError.self) {
            try S3ListObjectsPage(xml: Array("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>".utf8))
        }
        #expect(throws: S3ResponseParseError.self) { try S3ListObjectsPage(xml: Array("<ListBucketResult>".utf8)) }
    }

    @Test func multipartAnswers() throws {
        let initiated = try S3InitiateMultipartUploadResult(xml: Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>blobs</Bucket><Key>big</Key><UploadId>2~xYz</UploadId></InitiateMultipartUploadResult>
            """.utf8))
        #expect(initiated.uploadID == "2~xYz" && initiated.key == "big")
        #expect(throws: S3ResponseParseError.self) {
            try S3InitiateMultipartUploadResult(xml: Array("<InitiateMultipartUploadResult><UploadId></UploadId></InitiateMultipartUploadResult>".utf8))
        }

        #expect(try S3CompleteMultipartUploadResult(xml: Array("<CompleteMultipartUploadResult><ETag></ETag></CompleteMultipartUploadResult>".utf8)) == .completed(etag: nil))
        #expect(try S3CompleteMultipartUploadResult(xml: Array("<CompleteMultipartUploadResult><ETag>\"abc-2\"</ETag></CompleteMultipartUploadResult>".utf8)) == .completed(etag: "abc-2"))
        guard case .failed(let error) = try S3CompleteMultipartUploadResult(xml: Array("<Error><Code>InternalError</Code><Message>retry</Message></Error>".utf8)) else {
            Issue.record("a 200 with <Error> is a failure")
            return
        }
        #expect(error.code == "InternalError" && error.message == "retry")

        let uploads = try S3ListMultipartUploadsPage(xml: Array("""
            <ListMultipartUploadsResult><Bucket>blobs</Bucket><EncodingType>url</EncodingType>
              <NextKeyMarker>store%2Fb</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker><IsTruncated>true</IsTruncated>
              <Upload><Key>store/a%20x</Key><UploadId>u1</UploadId><Initiated>2026-11-24T10:00:00.000Z</Initiated></Upload>
              <Upload><Key>store/b</Key><UploadId>u2</UploadId><Initiated>2026-11-24T11:00:00+01:00</Initiated></Upload>
            </ListMultipartUploadsResult>
            """.utf8))
        #expect(uploads.uploads.map(\.key) == ["store/a x", "store/b"])
        #expect(uploads.uploads.map(\.uploadID) == ["u1", "u2"])
        #expect(uploads.uploads[0].initiated == uploads.uploads[1].initiated)
        #expect(uploads.isTruncated && uploads.nextKeyMarker == "store/b" && uploads.nextUploadIDMarker == "u2")
    }

    @Test func errorDocument() {
        let body = S3ErrorBody(xml: Array("<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><Resource>/b</Resource><RequestId>tx9</RequestId></Error>".utf8))
        #expect(body?.code == "NoSuchBucket")
        #expect(body?.message == "The specified bucket does not exist")
        #expect(body?.resource == "/b")
        #expect(body?.requestID == "tx9")
        #expect(S3ErrorBody(xml: [UInt8]()) == nil)
        #expect(S3ErrorBody(xml: Array("<Other/>".utf8)) == nil)
        #expect(S3ErrorBody(xml: Array("<Error><Message>no code</Message></Error>".utf8)) == nil)
    }

    @Test func valueConventions() {
        #expect(S3XMLValues.urlDecoded("a+b%2B%zz%4") == "a b+%zz%4")
        #expect(S3XMLValues.unquotedETag("W/\"abc\"") == "abc")
        #expect(S3XMLValues.unquotedETag("\"") == "\"")
        #expect(S3XMLValues.quotedETag("\"abc\"") == "\"abc\"")
        #expect(S3XMLValues.escaped("<a & 'b'>\"") == "&lt;a &amp; &apos;b&apos;&gt;&quot;")
        #expect(S3XMLValues.date("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(S3XMLValues.date("2000-02-29T12:00:00.5Z") == Date(timeIntervalSince1970: 951_825_600.5))
        for invalid in ["", "2026-13-01T00:00:00Z", "2026-11-24 14:30:48Z", "2026-11-24T14:30:48", "2026-11-24T14:30:48.Z", "2026-11-24T14:30:48Zjunk"] {
            #expect(S3XMLValues.date(invalid) == nil, "\(invalid)")
        }
    }
}
