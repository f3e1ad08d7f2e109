@testable import BlobServer
import BlobStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Pure parts of the server: routes, ranges, dates, JSON.
struct UnitTests {
    @Test func routes() {
        #expect(Route(decodedPath: Array("/v1/health".utf8)) == .health)
        #expect(Route(decodedPath: Array("/v1/stores".utf8)) == .stores)
        #expect(Route(decodedPath: Array("/v1/stores/s/blobs".utf8)) == .blobs(store: "s"))
        #expect(Route(decodedPath: Array("/v1/stores/s/blobs/a/b/c".utf8)) == .blob(store: "s", identifier: "a/b/c"))
        #expect(Route(decodedPath: Array("/v1/stores/s".utf8)) == nil)
        #expect(Route(decodedPath: Array("/v1/other".utf8)) == nil)
    }

    @Test func byteRanges() {
        #expect(ByteRange.parse("bytes=0-0", size: 10) == .satisfiable(0..<1))
        #expect(ByteRange.parse("bytes=5-100", size: 10) == .satisfiable(5..<10))
        #expect(ByteRange.parse("bytes=-4", size: 10) == .satisfiable(6..<10))
        #expect(ByteRange.parse("bytes=-40", size: 10) == .satisfiable(0..<10))
        #expect(ByteRange.parse("bytes=10-", size: 10) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 10) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,3-4", size: 10) == .ignore)
        #expect(ByteRange.parse("items=0-1", size: 10) == .ignore)
        #expect(ByteRange.parse("bytes=5-2", size: 10) == .ignore)
    }

    @Test func dates() {
        let date = Date(timeIntervalSince1970: 784_111_777.5)
        #expect(HTTPDates.imfFixdate(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDates.rfc3339(date) == "1994-11-06T08:49:37.500Z")
        #expect(HTTPDates.rfc3339(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(HTTPDates.imfFixdate(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    /// The byte-level formatter agrees with the C library's calendar on dates from 1900 to 2200.
    @Test func datesAgreeWithGmtime() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let seconds = Int64.random(in: -2_208_988_800...7_258_118_400, using: &generator)
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][Int(parts.tm_wday)]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(parts.tm_mon)]
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let expected = "\(days), \(two(parts.tm_mday)) \(months) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            let formatted = HTTPDates.imfFixdate(Date(timeIntervalSince1970: TimeInterval(seconds)))
            if formatted != expected {
                Issue.record("\(seconds): \(formatted) != \(expected)")
                return
            }
        }
    }

    @Test func jsonEscaping() {
        let bytes = JSONWriter.error(code: "x", message: "a\"b\\c\nd\u{1}")
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"error":{"code":"x","message":"a\"b\\c\nd\u0001"}}"#)
    }

    @Test func blobFieldNamesAreRecognisedInAnyCase() {
        for name in ["Blob-Meta-x", "BLOB-VALIDATE", "blob-", "bLoB-meta-"] { #expect(Router.hasBlobPrefix(name), "\(name)") }
        for name in ["blob", "Blo", "", "Content-Type", "blobx-meta", "xblob-", "Blob_Meta"] { #expect(!Router.hasBlobPrefix(name), "\(name)") }
    }

    @Test func metadataJSONIsExactlyTheDocumentedObject() throws {
        let created = Date(timeIntervalSince1970: 1_700_000_000.123)
        let modified = Date(timeIntervalSince1970: 1_800_000_000.5)
        let plain = BlobMetadata(
            identifier: "a/b \"q\"", size: 0, contentType: "text/plain", etag: ETag(checksum: 0x00ab_cdef_0123_4567),
            created: created, modified: modified)
        #expect(String(decoding: JSONWriter.metadata(plain), as: UTF8.self) == #"{"identifier":"a/b \"q\"","size":0,"contentType":"text/plain","etag":"00abcdef01234567","created":"2023-11-14T22:13:20.123Z","modified":"2027-01-15T08:00:00.500Z","metadata":{}}"#)
        let full = BlobMetadata(
            identifier: "img", size: Int64.max, contentType: "image/png", etag: ETag(checksum: .max), created: created,
            modified: created, userMetadata: ["z": "last", "a": "fi\nrst"], image: ImageInfo(format: .png, width: 640, height: 480))
        let text = String(decoding: JSONWriter.metadata(full), as: UTF8.self)
        #expect(text == #"{"identifier":"img","size":9223372036854775807,"contentType":"image/png","etag":"ffffffffffffffff","created":"2023-11-14T22:13:20.123Z","modified":"2023-11-14T22:13:20.123Z","metadata":{"a":"fi\nrst","z":"last"},"image":{"format":"png","width":640,"height":480}}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["size"] as? Int64 == Int64.max)
        #expect((object["metadata"] as? [String: String])?["a"] == "fi\nrst")
    }

    @Test func jsonEscapingEveryControlByteAndNonASCII() throws {
        // Every code unit below 0x80 plus multi-byte scalars; Foundation's decoder is the reference.
        let scalars = (0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) } + ["é", "日", "🐈", "\u{2028}"]
        let text = String(scalars) + "tail"
        var out: [UInt8] = []
        JSONWriter.appendString(text, into: &out)
        let decoded = try JSONDecoder().decode(String.self, from: Data(out))
        #expect(decoded == text)
        let literal = String(decoding: out, as: UTF8.self)
        #expect(literal.hasPrefix(#""\u0000\u0001"#))
        #expect(literal.contains(#"\t\n\u000b\u000c\r"#))
        #expect(literal.contains(##"\u001f !\"#$"##))
        #expect(literal.contains(#"[\\]"#))
        #expect(literal.contains(#"~\u007fé日🐈"#))
        #expect(literal.hasSuffix(#"tail""#))
    }
}

/// Who may connect.
struct PeerPolicyTests {
    @Test func ownUserRootAndAllowedGroupOnly() {
        let policy = PeerPolicy(ownUserID: 1000, allowedGroup: 50)
        #expect(policy.allows(userID: 1000, groupID: 1000))
        #expect(policy.allows(userID: 0, groupID: 0))
        #expect(policy.allows(userID: 1001, groupID: 50))
        #expect(!policy.allows(userID: 1001, groupID: 1001))
        #expect(!PeerPolicy(ownUserID: 1000, allowedGroup: nil).allows(userID: 1001, groupID: 50))
    }
}
